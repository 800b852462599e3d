"""What every command module of ``ouro`` shares: the one usage error, the one time parser, the one way to open
the event store, and the consoles. Importing it loads neither SQLAlchemy nor the event store."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

from ouroboros_gates.schemas.errors import OuroError

if TYPE_CHECKING:
    from ouroboros_gates.events import LedgerStore
    from ouroboros_gates.forge import WritableForge
    from ouroboros_gates.schemas.settings import Settings

__all__ = ["DOCS", "UsageError", "event_store", "instant", "opened_forge"]

DOCS = Path(__file__).resolve().parents[2] / "docs"
"""The guides, installed with the package: where a command that cites ``docs/…`` points."""


class UsageError(OuroError):
    """A command-line argument is wrong; the message names the argument or option."""


def instant(text: str, option: str = "--as-of", zone: tzinfo = UTC) -> datetime:
    """An ISO 8601 time or date given to ``option`` (``Z`` accepted), in UTC; one without an offset is read
    in ``zone``."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise UsageError(f"{option}: {text!r} is not an ISO 8601 time (e.g. 2026-10-02T12:00:00Z)") from exc
    return (moment if moment.tzinfo else moment.replace(tzinfo=zone)).astimezone(UTC)


def event_store(settings: Settings | None = None) -> LedgerStore:
    """The event store the settings name (``OURO_DATABASE_URL``, else the embedded SQLite log), at head."""
    from ouroboros_gates.events import open_store
    from ouroboros_gates.schemas.settings import load_settings

    return open_store((settings or load_settings()).event_log_url)


def opened_forge(settings: Settings) -> WritableForge:
    """The configured forge; on stderr, a line saying so when it is the sample forge the package ships."""
    from ouroboros_gates.forge.factory import open_forge, sample_note

    if (note := sample_note(settings)) is not None:
        print(note, file=sys.stderr)
    return open_forge(settings)

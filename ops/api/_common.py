"""What the API's routes share: the settings, the event store, the broker, and the query parameters'
bounds."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from celery import Celery
from fastapi import Query
from prometheus_client import CollectorRegistry
from sqlalchemy import Select

from ouroboros_gates.events import LedgerStore
from ouroboros_gates.schemas.settings import Settings

__all__ = [
    "MAX_POSITION",
    "After",
    "Deps",
    "Limit",
    "Offset",
    "iso",
    "page",
    "redact",
]

MAX_POSITION = 2**63 - 1
"""The largest log position (a 64-bit column): a larger number in a query is a 400, not a database error."""

After = Annotated[int, Query(ge=0, le=MAX_POSITION, description="Only rows past this log position.")]
Limit = Annotated[int, Query(ge=1, le=1000, description="Rows per page.")]
Offset = Annotated[
    int, Query(ge=0, le=1_000_000, description="Rows to skip (with a sort other than position).")
]

_CREDENTIALS = re.compile(r"(\w[\w+.-]*://)[^@/\s]+@")


def redact(text: str | None) -> str | None:
    """Credentials in URLs (``redis://user:secret@host``) are cut from anything the API shows."""
    return None if text is None else _CREDENTIALS.sub(r"\1***@", text)


def iso(moment: datetime) -> str:
    """An instant as ISO 8601 in UTC (SQLite hands back naive UTC)."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def page(rows: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    """A page ordered by position: its rows and the cursor of the next one (None on the last)."""
    return {"rows": rows, "next": rows[-1]["position"] if len(rows) == limit else None}


@dataclass(frozen=True)
class Deps:
    """What the routes share: the settings, the event store, the broker and the measuring tools built once."""

    settings: Settings
    store: LedgerStore
    broker: Celery
    zone: ZoneInfo
    cap_usd: float
    registry: CollectorRegistry

    def rows(self, query: Select[Any]) -> list[dict[str, Any]]:
        """The query's rows as dicts."""
        with self.store.reading() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def scalar(self, query: Select[Any]) -> Any:
        """The query's one value."""
        with self.store.reading() as conn:
            return conn.execute(query).scalar_one()

"""Schema migrations with Alembic: ``ouro db upgrade`` takes an empty database to head."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, MetaData, inspect, text

from ouroboros_gates.events.errors import MigrationError

if TYPE_CHECKING:
    from alembic.config import Config

    from ouroboros_gates.events.sql import SqlEventStore

__all__ = [
    "Revision",
    "current_revision",
    "downgrade",
    "ensure_schema",
    "head_revision",
    "history",
    "open_store",
    "target_metadata",
    "upgrade",
]

# One linear chain from 0001 to the head. Releases before 0.2.0 kept three heads (0008, 0010 and 0011 each
# off 0004) and upgraded to all of them: such a database is the linear chain's 0011, restamped so on upgrade.
_LEGACY_HEADS = frozenset({"0008", "0010", "0011"})

_HERE = Path(__file__).parent / "migrations"
_ADVISORY_KEY = 0x6F75726F  # "ouro": one migrator at a time on PostgreSQL


def target_metadata() -> MetaData:
    """The metadata holding every table (event log and ledger)."""
    from ouroboros_gates.events.ledger import metadata

    return metadata


def _config() -> Config:
    from alembic.config import Config  # Alembic is imported only when a migration may run: it is slow

    config = Config()
    config.set_main_option("script_location", str(_HERE))
    return config


@dataclass(frozen=True)
class Revision:
    """One migration of the chain: its id, the one it follows, and the first line of its docstring."""

    revision: str
    down_revision: str | None
    doc: str


def head_revision() -> str:
    """The head's revision id."""
    from alembic.script import ScriptDirectory

    return ",".join(sorted(ScriptDirectory.from_config(_config()).get_heads()))


def history() -> list[Revision]:
    """Every migration, oldest first."""
    from alembic.script import ScriptDirectory

    walked = ScriptDirectory.from_config(_config()).walk_revisions()
    return [
        Revision(r.revision, _one(r.down_revision), (r.doc or "").strip()) for r in reversed(list(walked))
    ]


def _one(down: str | Sequence[str] | None) -> str | None:
    return down if down is None or isinstance(down, str) else ",".join(down)


def current_revision(engine: Engine) -> str | None:
    """The database's revision (None for an empty database)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        heads = MigrationContext.configure(conn).get_current_heads()
    return ",".join(sorted(heads)) or None


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run every migration up to ``revision``."""
    _migrate(engine, "upgrade", revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Undo migrations down to ``revision`` (``base``: an empty schema; the event log's rows go with it)."""
    _migrate(engine, "downgrade", revision)


def _migrate(engine: Engine, direction: str, revision: str) -> None:
    from alembic import command
    from alembic.util import CommandError

    config = _config()
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ADVISORY_KEY})
        _restamp_legacy_heads(conn)
        config.attributes["connection"] = conn
        try:
            getattr(command, direction)(config, revision)
        except CommandError as exc:
            raise MigrationError(f"{direction} to {revision!r}: {exc}") from exc


def _restamp_legacy_heads(conn: Connection) -> None:
    """A database stamped with the three heads of releases before 0.2.0 is stamped 0011, the chain's same
    state."""
    if not inspect(conn).has_table("alembic_version"):
        return
    stamped = set(conn.execute(text("SELECT version_num FROM alembic_version")).scalars())
    if len(stamped) <= 1:
        return
    if stamped != _LEGACY_HEADS:
        raise MigrationError(
            f"the database is stamped {','.join(sorted(stamped))}: not a state any release left"
        )
    conn.execute(text("DELETE FROM alembic_version WHERE version_num <> '0011'"))


def ensure_schema(engine: Engine) -> None:
    """Upgrade to head unless already there (cheap when nothing is to do: no Alembic import)."""
    if _stamped(engine) != _head_from_files():
        upgrade(engine)


def open_store(url: str) -> SqlEventStore:
    """The event store at ``url``, its schema brought to head first (what every command and worker opens)."""
    from ouroboros_gates.events.sql import SqlEventStore

    store = SqlEventStore.from_url(url)
    ensure_schema(store.engine)
    return store


def _stamped(engine: Engine) -> str | None:
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars()
        return ",".join(sorted(rows)) or None


_REVISION = re.compile(r"^revision\s*=\s*[\"']([^\"']+)[\"']", re.MULTILINE)
_DOWN = re.compile(r"^down_revision\s*=\s*(.+)$", re.MULTILINE)


def _head_from_files() -> str:
    """The heads, read from the migration files' ``revision``/``down_revision`` lines without importing
    Alembic."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (_HERE / "versions").glob("[0-9][0-9][0-9][0-9]_*.py"):
        source = path.read_text(encoding="utf-8")
        if (found := _REVISION.search(source)) is not None:
            revisions.add(found.group(1))
        if (down := _DOWN.search(source)) is not None:
            parents.update(re.findall(r"[\"']([^\"']+)[\"']", down.group(1)))
    return ",".join(sorted(revisions - parents))

"""Schema migrations with Alembic: ``ouro db upgrade`` takes an empty database to head."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, MetaData, inspect, text

if TYPE_CHECKING:
    from alembic.config import Config

    from ouroboros_gates.events.sql import SqlEventStore

__all__ = ["current_revision", "ensure_schema", "head_revision", "open_store", "target_metadata", "upgrade"]

# Each worker's tables may sit on a branch of their own off the shared trunk: "head" is the set of heads,
# written as their sorted, comma-joined revisions.

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


def head_revision() -> str:
    """The heads' revision ids (sorted, comma-joined)."""
    from alembic.script import ScriptDirectory

    return ",".join(sorted(ScriptDirectory.from_config(_config()).get_heads()))


def current_revision(engine: Engine) -> str | None:
    """The database's revisions, sorted and comma-joined (None for an empty database)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        heads = MigrationContext.configure(conn).get_current_heads()
    return ",".join(sorted(heads)) or None


def upgrade(engine: Engine, revision: str = "heads") -> None:
    """Run every migration up to ``revision``."""
    from alembic import command

    config = _config()
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ADVISORY_KEY})
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


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
    """The heads, read from the migration files' ``revision``/``down_revision`` lines without importing Alembic."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (_HERE / "versions").glob("[0-9][0-9][0-9][0-9]_*.py"):
        source = path.read_text(encoding="utf-8")
        if (found := _REVISION.search(source)) is not None:
            revisions.add(found.group(1))
        if (down := _DOWN.search(source)) is not None:
            parents.update(re.findall(r"[\"']([^\"']+)[\"']", down.group(1)))
    return ",".join(sorted(revisions - parents))

"""Schema migrations with Alembic: ``ouro db upgrade`` takes an empty database to head."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, MetaData, text

__all__ = ["current_revision", "ensure_schema", "head_revision", "target_metadata", "upgrade"]

_HERE = Path(__file__).parent / "migrations"
_ADVISORY_KEY = 0x6F75726F  # "ouro": one migrator at a time on PostgreSQL


def target_metadata() -> MetaData:
    """The metadata holding every table (event log and ledger)."""
    from events.ledger import metadata

    return metadata


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(_HERE))
    return config


def head_revision() -> str:
    """The newest migration's revision id."""
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    """The database's revision (None for an empty database)."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run every migration up to ``revision``."""
    config = _config()
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ADVISORY_KEY})
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


def ensure_schema(engine: Engine) -> None:
    """Upgrade to head unless already there (cheap when nothing is to do)."""
    if current_revision(engine) != head_revision():
        upgrade(engine)

"""Schema migrations with Alembic: ``ouro db upgrade`` takes an empty database to head."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, MetaData, inspect, text

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = ["current_revision", "ensure_schema", "head_revision", "target_metadata", "upgrade"]

_HERE = Path(__file__).parent / "migrations"
_ADVISORY_KEY = 0x6F75726F  # "ouro": one migrator at a time on PostgreSQL


def target_metadata() -> MetaData:
    """The metadata holding every table (event log and ledger)."""
    from events.ledger import metadata

    return metadata


def _config() -> Config:
    from alembic.config import Config  # Alembic is imported only when a migration may run: it is slow

    config = Config()
    config.set_main_option("script_location", str(_HERE))
    return config


def head_revision() -> str:
    """The newest migration's revision id."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    """The database's revision (None for an empty database)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
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


def _stamped(engine: Engine) -> str | None:
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one_or_none()


def _head_from_files() -> str:
    """The newest revision, read from the file names (``NNNN_*.py``) without importing Alembic."""
    return max(path.name.split("_", 1)[0] for path in (_HERE / "versions").glob("[0-9][0-9][0-9][0-9]_*.py"))

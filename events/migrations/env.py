"""Alembic environment: runs on the connection handed in by ``events.migrate`` (or the URL)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from ouroboros_gates.events.migrate import target_metadata
from ouroboros_gates.events.sql import make_engine


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata(), render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    engine = make_engine(context.config.get_main_option("sqlalchemy.url") or "")
    with engine.connect() as conn:
        _run(conn)

"""The event log's own tables (the ledger's projection tables live with their projections)."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    UniqueConstraint,
)

__all__ = ["checkpoints", "events", "handled_messages", "metadata", "outbox", "trigger_locks"]

metadata = MetaData()

# Global position is assigned by the writer under a table lock, so it is gapless and in commit order.
events = Table(
    "ouro_events",
    metadata,
    Column("position", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=False),
    Column("stream", String(200), nullable=False),
    Column("version", Integer, nullable=False),
    Column("type", String(100), nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("payload", JSON, nullable=False),
    Column("meta", JSON, nullable=False),
    Column("message_id", String(128), nullable=True),
    Column("recorded_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("stream", "version", name="uq_ouro_events_stream_version"),
    Index("ix_ouro_events_type_position", "type", "position"),
)

# One row per (consumer, message): "already handled" is an integrity fact, not a guess.
handled_messages = Table(
    "ouro_handled_messages",
    metadata,
    Column("consumer", String(100), primary_key=True),
    Column("message_id", String(128), primary_key=True),
    Column("first_position", BigInteger, nullable=True),
    Column("last_position", BigInteger, nullable=True),
    Column("handled_at", DateTime(timezone=True), nullable=False),
    # On SQLite the key is the table (no rowid beside it): one B-tree written per append, not two.
    sqlite_with_rowid=False,
)

checkpoints = Table(
    "ouro_checkpoints",
    metadata,
    Column("projection", String(100), primary_key=True),
    Column("position", BigInteger, nullable=False),
)

outbox = Table(
    "ouro_outbox",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("message_id", String(128), nullable=False, unique=True),
    Column("message_type", String(100), nullable=False),
    Column("task", String(100), nullable=False),
    Column("payload", JSON, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("published_at", DateTime(timezone=True), nullable=True, index=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("last_error", String(500), nullable=True),
)

# The cron triggers' skip-while-running locks: taken by an atomic UPDATE ... WHERE expires_at < now.
trigger_locks = Table(
    "ouro_trigger_locks",
    metadata,
    Column("name", String(50), primary_key=True),
    Column("task", String(100), nullable=False),
    Column("message_id", String(128), nullable=True),
    Column("expires_at", BigInteger, nullable=False),  # epoch milliseconds: one type on SQLite and PostgreSQL
    Column("fired_at", BigInteger, nullable=True),
    Column("runs", Integer, nullable=False),
    Column("skips", Integer, nullable=False),
    Column("not_built", Integer, nullable=False),
    Column("last_outcome", String(100), nullable=True),
    Column("last_at", BigInteger, nullable=True),
)

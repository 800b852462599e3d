"""The event log: the store (SQL and in-memory, one contract), migrations, projections (the ledger) and replay."""

from __future__ import annotations

from events.errors import ConcurrencyError, UnknownEventType
from events.memory import MemoryEventStore
from events.migrate import current_revision, ensure_schema, head_revision, open_store, upgrade
from events.sql import SqlEventStore, make_engine
from events.store import (
    DEAD_LETTER,
    REJECTED,
    AppendResult,
    EventStore,
    Metadata,
    OutboxEntry,
    StoredEvent,
    StreamWrite,
    decode,
    iter_all,
    settling,
    utcnow,
)

__all__ = [
    "DEAD_LETTER",
    "REJECTED",
    "AppendResult",
    "ConcurrencyError",
    "EventStore",
    "MemoryEventStore",
    "Metadata",
    "OutboxEntry",
    "SqlEventStore",
    "StoredEvent",
    "StreamWrite",
    "UnknownEventType",
    "current_revision",
    "decode",
    "ensure_schema",
    "head_revision",
    "iter_all",
    "make_engine",
    "open_store",
    "settling",
    "upgrade",
    "utcnow",
]

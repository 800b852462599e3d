"""The event log: the store (SQL and in-memory, one contract), migrations, projections (the ledger) and
replay."""

from __future__ import annotations

from ouroboros_gates.events.errors import (
    ConcurrencyError,
    MigrationError,
    UndecodableEvent,
    UnknownEventType,
    UnknownSchemaVersion,
)
from ouroboros_gates.events.memory import MemoryEventStore
from ouroboros_gates.events.migrate import (
    Revision,
    current_revision,
    downgrade,
    ensure_schema,
    head_revision,
    history,
    open_store,
    upgrade,
)
from ouroboros_gates.events.side import SideTables
from ouroboros_gates.events.sql import SqlEventStore, make_engine, read_where
from ouroboros_gates.events.store import (
    DEAD_LETTER,
    REJECTED,
    AppendResult,
    EventStore,
    LedgerStore,
    Metadata,
    OutboxEntry,
    StoredEvent,
    StreamWrite,
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
    "LedgerStore",
    "MemoryEventStore",
    "Metadata",
    "MigrationError",
    "OutboxEntry",
    "Revision",
    "SideTables",
    "SqlEventStore",
    "StoredEvent",
    "StreamWrite",
    "UndecodableEvent",
    "UnknownEventType",
    "UnknownSchemaVersion",
    "current_revision",
    "downgrade",
    "ensure_schema",
    "head_revision",
    "history",
    "iter_all",
    "make_engine",
    "open_store",
    "read_where",
    "settling",
    "upgrade",
    "utcnow",
]

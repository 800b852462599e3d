"""The event log, its projections (the ledger), replay, and the corpus readers."""

from __future__ import annotations

from events.errors import (
    ConcurrencyError,
    ConfigurationError,
    CorpusError,
    OuroError,
    PermanentError,
    TransientError,
    UnknownEventType,
)
from events.memory import MemoryEventStore
from events.migrate import current_revision, ensure_schema, head_revision, open_store, upgrade
from events.settings import ROLES, Settings, load_settings
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
    "ROLES",
    "AppendResult",
    "ConcurrencyError",
    "ConfigurationError",
    "CorpusError",
    "EventStore",
    "MemoryEventStore",
    "Metadata",
    "OuroError",
    "OutboxEntry",
    "PermanentError",
    "Settings",
    "SqlEventStore",
    "StoredEvent",
    "StreamWrite",
    "TransientError",
    "UnknownEventType",
    "current_revision",
    "decode",
    "ensure_schema",
    "head_revision",
    "iter_all",
    "load_settings",
    "make_engine",
    "open_store",
    "settling",
    "upgrade",
    "utcnow",
]

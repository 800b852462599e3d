"""The event log, its projections (the ledger), replay, and the corpus readers.

Each name is imported from its module on first use (``__getattr__``), so the corpus readers and the errors
(``events.corpus``, ``events.errors``) are imported without SQLAlchemy.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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

_HOMES = {
    **dict.fromkeys(
        (
            "ConcurrencyError",
            "ConfigurationError",
            "CorpusError",
            "OuroError",
            "PermanentError",
            "TransientError",
            "UnknownEventType",
        ),
        "errors",
    ),
    **dict.fromkeys(("MemoryEventStore",), "memory"),
    **dict.fromkeys(("current_revision", "ensure_schema", "head_revision", "open_store", "upgrade"), "migrate"),
    **dict.fromkeys(("ROLES", "Settings", "load_settings"), "settings"),
    **dict.fromkeys(("SqlEventStore", "make_engine"), "sql"),
    **dict.fromkeys(
        (
            "DEAD_LETTER",
            "REJECTED",
            "AppendResult",
            "EventStore",
            "Metadata",
            "OutboxEntry",
            "StoredEvent",
            "StreamWrite",
            "decode",
            "iter_all",
            "settling",
            "utcnow",
        ),
        "store",
    ),
}

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


def __getattr__(name: str) -> Any:
    """Each name from its module on first use (a submodule's name falls through to the import system)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'events' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"events.{home}"), name)

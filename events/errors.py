"""Errors of the event log; the root of the tree is ``schemas.errors``.

OuroError                      (schemas.errors) root of every error Ouroboros raises on purpose
├── TransientError             (schemas.errors) worth retrying
│   └── ConcurrencyError       optimistic concurrency: the stream moved on (read it again, decide again)
└── PermanentError             (schemas.errors) retrying cannot help
    ├── MigrationError         a schema migration asked for cannot run (unknown revision, odd stamp)
    ├── UnknownEventType       (schemas.errors) a stored type no class is registered for
    ├── UnknownSchemaVersion   (schemas.errors) a stored schema_version newer than its class
    └── UndecodableEvent       a stored payload its class refuses (names the position and the fields)

Reading an event back goes through one decoding (``StoredEvent.decode``: the type's class, the named
upcasters from the version it was stored at, validation), which raises the last three.
"""

from __future__ import annotations

from ouroboros_gates.schemas.errors import (
    PermanentError,
    TransientError,
    UnknownEventType,
    UnknownSchemaVersion,
)

__all__ = [
    "ConcurrencyError",
    "MigrationError",
    "UndecodableEvent",
    "UnknownEventType",
    "UnknownSchemaVersion",
]


class ConcurrencyError(TransientError):
    """The stream's version is not the one the writer expected: another writer appended since it read.

    Worth retrying: the writer reads the stream again and decides again (a task's retry finds what the other
    writer appended, as ``miner.accept`` does with a verdict another worker recorded first)."""

    def __init__(self, stream: str, expected: int, actual: int) -> None:
        super().__init__(f"stream {stream!r}: expected version {expected}, actual version {actual}")
        self.stream = stream
        self.expected = expected
        self.actual = actual


class MigrationError(PermanentError):
    """A migration asked for cannot run: an unknown revision, or a database stamped in a state no release
    left."""


class UndecodableEvent(PermanentError):
    """A stored payload its registered class refuses: the log holds what this code cannot read."""

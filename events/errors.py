"""Errors of the event log; the root of the tree is ``schemas.errors``.

OuroError                      (schemas.errors) root of every error Ouroboros raises on purpose
└── PermanentError             (schemas.errors) retrying cannot help
    ├── ConcurrencyError       optimistic concurrency: the stream moved on
    ├── MigrationError         a schema migration asked for cannot run (unknown revision, odd stamp)
    └── UnknownEventType       a stored type no class is registered for
"""

from __future__ import annotations

from ouroboros_gates.schemas.errors import PermanentError

__all__ = ["ConcurrencyError", "MigrationError", "UnknownEventType"]


class ConcurrencyError(PermanentError):
    """The stream's version is not the one the writer expected."""

    def __init__(self, stream: str, expected: int, actual: int) -> None:
        super().__init__(f"stream {stream!r}: expected version {expected}, actual version {actual}")
        self.stream = stream
        self.expected = expected
        self.actual = actual


class MigrationError(PermanentError):
    """A migration asked for cannot run: an unknown revision, or a database stamped in a state no release left."""


class UnknownEventType(PermanentError):
    """A stored event's type has no registered class."""

"""Errors of the event log; the root of the tree is ``schemas.errors``.

OuroError                      (schemas.errors) root of every error Ouroboros raises on purpose
└── PermanentError             (schemas.errors) retrying cannot help
    ├── ConcurrencyError       optimistic concurrency: the stream moved on
    └── UnknownEventType       a stored type no class is registered for
"""

from __future__ import annotations

from ouroboros_gates.schemas.errors import PermanentError

__all__ = ["ConcurrencyError", "UnknownEventType"]


class ConcurrencyError(PermanentError):
    """The stream's version is not the one the writer expected."""

    def __init__(self, stream: str, expected: int, actual: int) -> None:
        super().__init__(f"stream {stream!r}: expected version {expected}, actual version {actual}")
        self.stream = stream
        self.expected = expected
        self.actual = actual


class UnknownEventType(PermanentError):
    """A stored event's type has no registered class."""

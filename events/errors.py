"""Errors of the event log and its adapters.

    OuroError                      root of every error Ouroboros raises on purpose
    ├── ConfigurationError         a setting is missing or invalid (names the OURO_ key)
    ├── TransientError             worth retrying: the database or broker is unreachable
    └── PermanentError             retrying cannot help
        ├── ConcurrencyError       optimistic concurrency: the stream moved on
        ├── UnknownEventType       a stored type no class is registered for
        └── CorpusError            a corpus file cannot be read at all (names the path)

Tasks retry only ``TransientError``; a ``PermanentError`` goes to the dead-letter queue at once.
"""

from __future__ import annotations

__all__ = [
    "ConcurrencyError",
    "ConfigurationError",
    "CorpusError",
    "OuroError",
    "PermanentError",
    "TransientError",
    "UnknownEventType",
]


class OuroError(Exception):
    """Root of every error Ouroboros raises on purpose."""


class ConfigurationError(OuroError):
    """A setting is missing or invalid; the message names the environment key."""


class TransientError(OuroError):
    """A failure worth retrying (database or broker unreachable, lock timeout)."""


class PermanentError(OuroError):
    """A failure that retrying cannot fix."""


class ConcurrencyError(PermanentError):
    """The stream's version is not the one the writer expected."""

    def __init__(self, stream: str, expected: int, actual: int) -> None:
        super().__init__(f"stream {stream!r}: expected version {expected}, actual version {actual}")
        self.stream = stream
        self.expected = expected
        self.actual = actual


class UnknownEventType(PermanentError):
    """A stored event's type has no registered class."""


class CorpusError(PermanentError):
    """A corpus file or directory cannot be read at all."""

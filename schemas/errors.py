"""The root of the project's error tree, on the ground floor so that every package can raise into it.

    OuroError                      root of every error Ouroboros raises on purpose
    ├── ConfigurationError         a setting is missing or invalid (names the OURO_ key)
    ├── TransientError             worth retrying: the database, broker or a subprocess timed out
    └── PermanentError             retrying cannot help
        ├── CorpusError            a corpus file cannot be read at all (names the path)
        ├── GitError               git refused or failed (names the command and what git said)
        ├── UnknownEventType       a stored event's type has no registered class (also a ``KeyError``)
        └── UnknownSchemaVersion   a stored event's schema_version is newer than its class (also a
        ``ValueError``)

Each package hangs its own errors under these (``events.errors``, ``miners.errors``, ``llm.errors``,
``forge.base``, ``decider.learn.errors``). Tasks retry only ``TransientError``; a ``PermanentError`` goes to
the dead-letter queue at once. The two decoding errors sit here, where the registry that raises them is;
``events.errors`` re-exports them, as what reading the log can raise.
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "CorpusError",
    "GitError",
    "OuroError",
    "PermanentError",
    "TransientError",
    "UnknownEventType",
    "UnknownSchemaVersion",
]


class OuroError(Exception):
    """Root of every error Ouroboros raises on purpose."""


class ConfigurationError(OuroError):
    """A setting is missing or invalid; the message names the environment key."""


class TransientError(OuroError):
    """A failure worth retrying (database or broker unreachable, lock timeout)."""


class PermanentError(OuroError):
    """A failure that retrying cannot fix."""


class CorpusError(PermanentError):
    """A corpus file or directory cannot be read at all."""


class GitError(PermanentError):
    """A git command failed; the message names the command (without its environment) and git's own words."""

    def __init__(
        self, argv: list[str], message: str, returncode: int | None = None, timed_out: bool = False
    ) -> None:
        super().__init__(f"git {' '.join(argv)}: {message}")
        self.argv = argv
        self.message = message
        self.returncode = returncode
        self.timed_out = timed_out


class UnknownEventType(PermanentError, KeyError):
    """A stored event's type has no registered class; a ``KeyError`` too, as the registry lookup it is."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""  # KeyError's own would quote the message


class UnknownSchemaVersion(PermanentError, ValueError):
    """A stored event was written at a ``schema_version`` its class cannot read (newer than the code, or below
    1)."""

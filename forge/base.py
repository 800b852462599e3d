"""The forge contract: tickets, pull requests, commits and files at a revision, as frozen values.

    PermanentError
    └── ForgeError                 a forge file or the repository cannot be read, or a request is refused
        └── NotFoundError          no such ticket, pull request, revision or path

Adapters (``local``, ``github``) return these types and raise only these errors (a git timeout is a
``TransientError``). Pure code: no Celery, no SQLAlchemy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

from ouroboros_gates.schemas.errors import PermanentError

__all__ = [
    "COMMIT_NAME",
    "HEX_REF",
    "ISSUE_REF",
    "Check",
    "Comment",
    "Commit",
    "Forge",
    "ForgeError",
    "NotFoundError",
    "PullRequest",
    "Ticket",
    "WritableForge",
    "parse_trailers",
]


class ForgeError(PermanentError):
    """A forge file or the repository cannot be read, or a request to it is refused."""


class NotFoundError(ForgeError):
    """The ticket, pull request, revision or path does not exist."""


# git's default trailer token: letters, digits and hyphens, then ':' (spaces before it allowed).
COMMIT_NAME = re.compile(r"[0-9a-fA-F]{7,40}")
"""How a proposal or a label request names a commit (``fullmatch``): 7 to 40 hex digits, as git
abbreviates."""

ISSUE_REF = re.compile(r"#([0-9]+)")
"""How an instance names an issue or pull request of the forge (``fullmatch``): ``#N``."""
HEX_REF = re.compile(r"[0-9a-fA-F]{4,40}")
"""A name a forge looks up as a commit of its repository (``fullmatch``): 4 to 40 hex digits."""

_TRAILER = re.compile(r"^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*:[ \t]*(.*)$")


def parse_trailers(message: str) -> dict[str, tuple[str, ...]]:
    """Trailers of a commit message's last paragraph, as git reads them.

    The last paragraph counts only when it is not the subject and every line is a ``Key: value``
    trailer or a continuation (a line starting with whitespace). Keys match case-insensitively, as in
    git; the first spelling names the key and each later value is appended under it, in order.
    """
    paragraphs = [p for p in re.split(r"\n[ \t]*\n", message.strip()) if p.strip()]
    if len(paragraphs) < 2:
        return {}
    entries: list[tuple[str, str]] = []
    for line in paragraphs[-1].splitlines():
        if line[:1] in (" ", "\t") and entries:
            key, value = entries[-1]
            entries[-1] = (key, f"{value} {line.strip()}".strip())
            continue
        match = _TRAILER.match(line)
        if match is None:
            return {}
        entries.append((match.group(1), match.group(2).strip()))
    spelling: dict[str, str] = {}
    trailers: dict[str, tuple[str, ...]] = {}
    for key, value in entries:
        name = spelling.setdefault(key.lower(), key)
        trailers[name] = (*trailers.get(name, ()), value)
    return trailers


@dataclass(frozen=True)
class Comment:
    """One comment on a ticket."""

    id: int
    author: str
    created_at: datetime
    body: str


@dataclass(frozen=True)
class Ticket:
    """An issue with its comments, oldest first."""

    number: int
    title: str
    body: str
    state: str
    labels: tuple[str, ...]
    created_at: datetime
    comments: tuple[Comment, ...]


@dataclass(frozen=True)
class Commit:
    """A commit, with the trailers of its message; ``files``: the paths it changed, where the forge was asked
    for them (``Forge.commit``; a pull request's commit list does not say)."""

    sha: str
    message: str
    trailers: dict[str, tuple[str, ...]] = field(hash=False, compare=False)
    files: tuple[str, ...] = field(default=(), hash=False, compare=False)

    @classmethod
    def parse(cls, sha: str, message: str, files: tuple[str, ...] = ()) -> Commit:
        """A commit whose trailers are read from ``message``."""
        return cls(sha=sha, message=message, trailers=parse_trailers(message), files=files)

    def trailer(self, key: str) -> tuple[str, ...]:
        """Every value of the trailer ``key``, matched case-insensitively; empty when absent."""
        wanted = key.lower()
        return next((values for name, values in self.trailers.items() if name.lower() == wanted), ())


@dataclass(frozen=True)
class Check:
    """One check run on a pull request's head."""

    name: str
    command: str
    exit_code: int


@dataclass(frozen=True)
class PullRequest:
    """A pull request: its state, head, commits (oldest first) and checks."""

    number: int
    title: str
    body: str
    state: str
    draft: bool
    labels: tuple[str, ...]
    created_at: datetime
    base: str
    head_sha: str
    author: str
    commits: tuple[Commit, ...]
    checks: tuple[Check, ...]
    head_ref: str = ""  # the branch it was opened from ("" when the forge does not say)


@runtime_checkable
class Forge(Protocol):
    """What the workers read from a forge; every adapter implements all of it."""

    def ticket(self, number: int) -> Ticket:
        """The ticket ``number``; ``NotFoundError`` when there is none."""
        ...

    def tickets(self) -> list[Ticket]:
        """Every ticket, by number."""
        ...

    def pull_request(self, number: int) -> PullRequest:
        """The pull request ``number``; ``NotFoundError`` when there is none."""
        ...

    def pull_requests(self, state: str | None = None) -> list[PullRequest]:
        """Every pull request in ``state`` (all when None), by number."""
        ...

    def exists(self, ref: str) -> bool:
        """Whether ``#N`` names an issue or pull request, or a hex string a commit of the repository."""
        ...

    def has_commit(self, sha: str) -> bool:
        """Whether the repository has the commit ``sha`` (full or an unambiguous prefix)."""
        ...

    def file_at(self, revision: str, path: str) -> bytes:
        """The bytes of ``path`` at ``revision``; ``NotFoundError`` when either is missing."""
        ...

    def commit(self, sha: str) -> Commit:
        """The commit ``sha`` (full or an unambiguous prefix) with its full sha, its message and the paths
        it changed (against its first parent; every path for a root commit); ``NotFoundError`` when there is
        none."""
        ...


@runtime_checkable
class WritableForge(Forge, Protocol):
    """A forge the merge train and the close-ticket gate can write to."""

    def comments(self, number: int) -> tuple[Comment, ...]:
        """Every comment on issue or pull request ``number``, oldest first."""
        ...

    def comment(self, number: int, body: str) -> Comment:
        """Post ``body`` as a comment on issue or pull request ``number``."""
        ...

    def merge(self, number: int, head_sha: str, message: str) -> str:
        """Merge pull request ``number`` at ``head_sha`` (refused if its head moved); the merge commit."""
        ...

    def close_ticket(self, number: int) -> None:
        """Close issue ``number``."""
        ...

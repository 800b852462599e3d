"""Forge adapters: tickets, pull requests, commits and files at a revision, behind one protocol.

``base`` holds the frozen values, the ``Forge`` protocol and the errors; ``local`` reads a forge on disk
(JSON files and a git repository or bundle). Pure code: no Celery, no SQLAlchemy.

    forge = LocalForge.from_examples(Path("examples"), cache_dir)
    forge.ticket(53).comments[-1].body           # the latest proposal
    forge.pull_request(58).commits[-1].trailer("CSF-Session")
    forge.file_at("374fdc4", "shop/reports.py")  # bytes
"""

from __future__ import annotations

from events.forge.base import (
    Check,
    Comment,
    Commit,
    Forge,
    ForgeError,
    NotFoundError,
    PullRequest,
    Ticket,
    parse_trailers,
)
from events.forge.local import LocalForge

__all__ = [
    "Check",
    "Comment",
    "Commit",
    "Forge",
    "ForgeError",
    "LocalForge",
    "NotFoundError",
    "PullRequest",
    "Ticket",
    "parse_trailers",
]

"""Forge adapters: tickets, pull requests, commits and files at a revision, behind one protocol.

``base`` holds the frozen values, the ``Forge`` and ``WritableForge`` protocols and the errors; ``local``
reads a forge on disk (JSON files and a git repository or bundle) and writes into a directory beside it
(``overlay``); ``github`` (imported on demand: ``forge.github.GitHubForge``, it loads githubkit) is
GitHub's REST API; ``factory.open_forge`` picks one from ``OURO_FORGE``. Pure code: no Celery, no SQLAlchemy.

    forge = LocalForge.from_examples(Path("examples"), cache_dir)
    forge.ticket(53).comments[-1].body           # the latest proposal
    forge.pull_request(58).commits[-1].trailer("CSF-Session")
    forge.file_at("374fdc4", "shop/reports.py")  # bytes
"""

from __future__ import annotations

from ouroboros_gates.forge.base import (
    Check,
    Comment,
    Commit,
    Forge,
    ForgeError,
    NotFoundError,
    PullRequest,
    Ticket,
    WritableForge,
    parse_trailers,
)
from ouroboros_gates.forge.factory import open_forge
from ouroboros_gates.forge.local import LocalForge

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
    "WritableForge",
    "open_forge",
    "parse_trailers",
]

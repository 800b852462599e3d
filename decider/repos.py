"""Repository keys: one normal form for the training groups and for the repository a decision is for,
so the deployment boundary (your own repository never reaches a prompt) compares like with like."""

from __future__ import annotations

import re

__all__ = ["normalise_repo"]

_HOST = re.compile(
    r"^(?:[a-z+]+://)?(?:[^@/\s]+@)?(?:www\.)?(?:github\.com|gitlab\.com|bitbucket\.org)[/:]", re.IGNORECASE
)


def normalise_repo(repo: str) -> str:
    """``https://github.com/Owner/Name.git/commit/…`` or ``git@github.com:Owner/Name.git`` → ``owner/name``;
    anything else lower-cased."""
    text = _HOST.sub("", repo.strip()).strip("/")
    parts = [p for p in text.split("/") if p]
    if len(parts) >= 2:
        text = f"{parts[0]}/{parts[1]}"
    text = text.lower()
    return text.removesuffix(".git")

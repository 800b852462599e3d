"""Repository groups: the unit of every fold, merged across advisory ids so no repository straddles folds.

A group key is the lower-cased ``owner/name`` (a URL, ``github.com/...``, ``.git`` suffix and case
removed). Repositories that share an advisory id (CVE or GHSA) are merged into one group: a fork or a
mirror under another name carries the same advisory, and must not sit in two folds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ouroboros_gates.decider.repos import normalise_repo

__all__ = ["ADVISORY", "advisory_ids", "merge_groups", "normalise_repo"]

ADVISORY = re.compile(r"\b(CVE-\d{4}-\d{4,7}|GHSA(?:-[23456789cfghjmpqrvwx]{4}){3})\b", re.IGNORECASE)


def advisory_ids(text: str) -> frozenset[str]:
    """Every CVE or GHSA id in ``text``, upper-cased."""
    return frozenset(m.upper() for m in ADVISORY.findall(text))


def merge_groups(advisories: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """Map each repository key to its group: the smallest key among those sharing an advisory id.

    ``advisories`` maps a normalised repository to the advisory ids seen with it (possibly none).
    """
    parent = {repo: repo for repo in advisories}
    first_by_id: dict[str, str] = {}
    for repo in sorted(advisories):
        for ident in _idents(advisories[repo]):
            _join(parent, repo, first_by_id.setdefault(ident, repo))
    return {repo: _root(parent, repo) for repo in advisories}


def _idents(advisories: Iterable[str]) -> list[str]:
    """A repository's advisory ids, upper-cased, each once, sorted."""
    return sorted({a.upper() for a in advisories})


def _root(parent: dict[str, str], x: str) -> str:
    """The key a repository's group is named by (halving the path to it on the way)."""
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def _join(parent: dict[str, str], repo: str, other: str) -> None:
    """Put two repositories in one group, named by the smaller root."""
    a, b = _root(parent, repo), _root(parent, other)
    if a != b:
        parent[max(a, b)] = min(a, b)

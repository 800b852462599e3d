"""Bandit on Python files, as a library: its issues become signals, its CWE maps to a family.

Bandit's import checks (``B4xx``: "this module is imported") are left out: an import is not a use, and
they would raise a candidate at ``<global>`` of every file that imports ``subprocess``. An issue whose
CWE no family claims raises no signal.

Bandit parses with the running interpreter. A file written for a newer Python (3.12's f-strings) is read
again, rewritten line for line so that this interpreter parses it (``_py_compat``); a file that still does not
parse (Python 2, other new syntax) is ``failed``, and the scan names the instrument and its count of such
files.
"""

from __future__ import annotations

import io
import logging
import threading
import warnings
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from typing import Any

from ouroboros_gates.decider.instruments._py_compat import parseable
from ouroboros_gates.decider.instruments.base import state
from ouroboros_gates.decider.instruments.families import Families, families
from ouroboros_gates.schemas import InstrumentState, State

__all__ = ["BanditIssue", "bandit_scan", "bandit_version"]

_LEVELS = ("low", "medium", "high")
_LOCK = threading.Lock()


@dataclass(frozen=True)
class BanditIssue:
    """One Bandit issue mapped onto a family."""

    test_id: str
    family: str
    line: int
    severity: str
    confidence: str
    text: str
    cwe: int | None


def bandit_version() -> str:
    """The Bandit version that produced the issues, and how newer syntax is read (``fstrings-1``)."""
    return f"bandit-{metadata.version('bandit')}+fstrings-1"


@cache
def _manager() -> Any:
    """Bandit's manager, built once; Bandit is imported here, where its plugin loading warns."""
    logging.getLogger("bandit").setLevel(logging.CRITICAL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # stevedore's, inside Bandit's plugin loading
        from bandit.core import config, manager  # type: ignore[import-untyped]

        return manager.BanditManager(config.BanditConfig(), "file", quiet=True)


def bandit_scan(language: str, source: bytes) -> tuple[list[BanditIssue], InstrumentState]:
    """Bandit's issues for a Python file; ``not_applicable`` for other languages, ``failed`` if unread."""
    if language != "python":
        return [], state(State.NOT_APPLICABLE, bandit_version())
    results = _results(source)
    if results is None:
        return [], state(State.FAILED, bandit_version())
    return _issues(results), state(State.RAN, bandit_version())


def _results(source: bytes) -> list[Any] | None:
    """Bandit's results for a file, read again rewritten (``_py_compat``) when it does not parse; None
    when it still does not."""
    results, skipped = _run(source)
    if not skipped:
        return results
    text = parseable(source.decode("utf-8", "replace"))
    if text is None:
        return None
    results, skipped = _run(text.encode("utf-8"))
    return None if skipped else results


def _issues(results: list[Any]) -> list[BanditIssue]:
    """The results as issues, each mapped onto its family (none for an import check or an unclaimed CWE)."""
    table = families()
    issues: list[BanditIssue] = []
    for result in results:
        issue = _issue(result, table)
        if issue is not None:
            issues.append(issue)
    return issues


def _issue(result: Any, table: Families) -> BanditIssue | None:
    """One result as an issue of its CWE's family; None for an import check (``B4xx``) or a CWE no family
    claims."""
    cwe = _cwe(result)
    family = table.for_cwe(cwe)
    if family is None or str(result.test_id).startswith("B4"):
        return None
    return BanditIssue(
        test_id=str(result.test_id),
        family=family,
        line=int(result.lineno),
        severity=_level(result.severity),
        confidence=_level(result.confidence),
        text=str(result.text),
        cwe=cwe,
    )


def _cwe(result: Any) -> int | None:
    """The CWE number Bandit gives a result (None when it gives none)."""
    raw_cwe = getattr(result.cwe, "id", None)
    return int(raw_cwe) if raw_cwe else None


def _run(source: bytes) -> tuple[list[Any], list[Any]]:
    """Bandit's results and skips (a skip: the file did not parse) for one file's bytes."""
    name = "candidate.py"
    with _LOCK:
        manager = _manager()
        manager.results = []
        manager.skipped = []
        manager._parse_file(name, io.BytesIO(source), [name])
        return list(manager.results), list(manager.skipped)


def _level(value: object) -> str:
    text = str(value).lower()
    return text if text in _LEVELS else "low"

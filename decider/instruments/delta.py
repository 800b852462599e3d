"""Delta features: how a function changed from base to head (novelty, changed lines, sanitizer removed).

Novelty compares the file-local signals of the family (quick rules and Bandit) in the head function
with the same function at base: absent at base is ``new``, more signals ``worsened``, otherwise
``unchanged``; a base file tree-sitter could not parse is ``unknown``. On a scan the instrument is
``not_applicable``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from decider.instruments.base import state
from decider.instruments.roles import RoleEntry
from decider.languages import Function, ParsedFile
from schemas import InstrumentState, State

__all__ = ["DELTA_VERSION", "DeltaFacts", "delta_facts", "delta_state", "find_function"]

DELTA_VERSION = "delta-1"
_CAP = 200


@dataclass(frozen=True)
class DeltaFacts:
    """The delta features of one candidate."""

    novelty: str
    changed_lines: int
    sanitizer_removed: bool


def delta_state(base: str | None) -> InstrumentState:
    """``ran`` for a push, ``not_applicable`` for a scan."""
    return state(State.RAN if base is not None else State.NOT_APPLICABLE, DELTA_VERSION)


def find_function(item: ParsedFile | None, name: str) -> Function | None:
    """The function of that name in a file, or None."""
    if item is None:
        return None
    return next((function for function in item.functions if function.name == name), None)


def _sanitizers(function: Function, entries: Iterable[RoleEntry]) -> Counter[str]:
    return Counter(call.callee for call in function.calls for entry in entries if entry.matches(call))


def delta_facts(
    head_fn: Function,
    base_file: ParsedFile | None,
    *,
    head_signals: int,
    base_signals: int,
    changed: int,
    sanitizers: Iterable[RoleEntry],
) -> DeltaFacts:
    """Novelty, changed lines and a removed sanitizer for one function and family."""
    base_fn = find_function(base_file, head_fn.name)
    removed = False
    if base_file is None or base_fn is None:
        novelty = "new"
    elif base_file.has_errors:
        novelty = "unknown"
    else:
        novelty = "worsened" if head_signals > base_signals else "unchanged"
        entries = list(sanitizers)
        removed = bool(_sanitizers(base_fn, entries) - _sanitizers(head_fn, entries))
    return DeltaFacts(novelty=novelty, changed_lines=min(changed, _CAP), sanitizer_removed=removed)

"""Delta features: how a function changed from base to head (novelty, changed lines, sanitizer removed,
tests removed or added).

Novelty compares the file-local signals of the family (quick rules, Bandit, and the taint step's flows that
reach a sink of the family unsanitised) in the head function with the same function at base: absent at base is
``new``, more signals ``worsened``, otherwise ``unchanged``; a base file tree-sitter could not parse is
``unknown``. ``tests`` compares the atomic tests
of the function's conditions and assertions (``guards.count_tests``): ``fewer`` at head than at base (a
guard removed), ``more``, ``same``, or ``no_base`` for a function new at head. On a scan the instrument is
``not_applicable``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ouroboros_gates.decider.instruments.base import state
from ouroboros_gates.decider.instruments.guards import count_tests
from ouroboros_gates.decider.instruments.roles import RoleEntry
from ouroboros_gates.decider.languages import Function, ParsedFile
from ouroboros_gates.schemas import InstrumentState, State

__all__ = ["DELTA_VERSION", "DeltaFacts", "delta_facts", "delta_state", "find_function"]

DELTA_VERSION = "delta-3"
_CAP = 200


@dataclass(frozen=True)
class DeltaFacts:
    """The delta features of one candidate."""

    novelty: str
    changed_lines: int
    sanitizer_removed: bool
    tests: str = "no_base"


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
    head_file: ParsedFile | None = None,
) -> DeltaFacts:
    """Novelty, changed lines, a removed sanitizer and removed or added tests for one function and family
    (``tests`` needs ``head_file``, the file ``head_fn`` is of)."""
    base_fn = find_function(base_file, head_fn.name)
    changed_lines = min(changed, _CAP)
    if base_file is None or base_fn is None:
        return DeltaFacts(novelty="new", changed_lines=changed_lines, sanitizer_removed=False)
    if base_file.has_errors:
        novelty, removed = "unknown", False
    else:
        novelty = "worsened" if head_signals > base_signals else "unchanged"
        removed = _sanitizer_removed(head_fn, base_fn, sanitizers)
    tests = _tests(head_fn, head_file, base_fn, base_file)
    return DeltaFacts(novelty=novelty, changed_lines=changed_lines, sanitizer_removed=removed, tests=tests)


def _sanitizer_removed(head_fn: Function, base_fn: Function, sanitizers: Iterable[RoleEntry]) -> bool:
    """Whether the function at base called a sanitizer more often than at head."""
    entries = list(sanitizers)
    return bool(_sanitizers(base_fn, entries) - _sanitizers(head_fn, entries))


def _tests(head_fn: Function, head_file: ParsedFile | None, base_fn: Function, base_file: ParsedFile) -> str:
    """How the function's count of atomic tests changed (``no_base`` without the head's file)."""
    if head_file is None:
        return "no_base"
    return _compare(
        count_tests(head_file.language, head_file.source_of(head_fn)),
        count_tests(base_file.language, base_file.source_of(base_fn)),
    )


def _compare(head: int, base: int) -> str:
    return "fewer" if head < base else "more" if head > base else "same"

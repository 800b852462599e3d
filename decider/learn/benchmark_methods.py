"""The methods a benchmark scores side by side on the same cases: the decider out of fold, and the
instruments alone in the ways a reader would use them without it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from ouroboros_gates.decider.analyse import Analysed
from ouroboros_gates.decider.instruments import families
from ouroboros_gates.decider.languages import language_of
from ouroboros_gates.decider.learn.benchmark_cases import Case, family_candidates

__all__ = ["DESCRIBED", "methods"]

DESCRIBED = {
    "decider": "the memory-vote program at $0: a candidate of the case's family at ADVISORY (out of fold)",
    "instruments": "any signal of the case's family in the file (quick rules, Bandit, roles, taint)",
    "taint_or_rule": "a taint flow of the case's family, or a quick rule of it (families no flow can show)",
    "quick_rules_any": "any enabled quick-rule finding in the file, any family",
    "bandit_any": "any Bandit finding in the file (Python files only; none elsewhere)",
}
"""Each method, as the report describes it."""


def methods(
    cases: Sequence[Case],
    analysed: Mapping[str, list[Analysed]],
    flagged: Mapping[str, bool],
) -> dict[str, NDArray[np.bool_]]:
    """Whether each method flags each case (Bandit left out where no case is a Python file)."""
    no_flow = _flowless_families()

    def column(test: Callable[[Case], bool]) -> NDArray[np.bool_]:
        return np.array([test(c) for c in cases], dtype=bool)

    found = {
        "decider": column(lambda c: flagged[c.name]),
        "instruments": column(lambda c: bool(family_candidates(c, analysed))),
        "taint_or_rule": column(lambda c: _taint_or_rule(c, _signals(c, analysed), no_flow)),
        "quick_rules_any": column(lambda c: _any_of(_signals(c, analysed), "qr")),
        "bandit_any": column(lambda c: _any_of(_signals(c, analysed), "bandit")),
    }
    if not _any_python(cases):
        del found["bandit_any"]  # Bandit reads Python only: no coverage is not a score of zero
    return found


def _flowless_families() -> set[str]:
    """The families with no taint operation: no flow can show them."""
    return {f for f in families().ids if not families().operations_of(f)}


def _any_python(cases: Sequence[Case]) -> bool:
    """Whether any case is a Python file."""
    return any(language_of(c.path) == "python" for c in cases)


def _signals(case: Case, analysed: Mapping[str, list[Analysed]]) -> list[tuple[str, str]]:
    """The (instrument, family) of every signal in the case's file."""
    return [(s.instrument, s.family) for a in analysed.get(case.name, []) for s in a.signals]


def _any_of(signals: Sequence[tuple[str, str]], instrument: str) -> bool:
    """Whether any signal comes from this instrument, whatever its family."""
    return any(i == instrument for i, _ in signals)


def _taint_or_rule(case: Case, signals: Sequence[tuple[str, str]], no_flow: set[str]) -> bool:
    """A taint flow of the case's family, or a quick rule of a family no flow can show."""
    return any(
        f == case.family and (i == "taint" or (i == "qr" and case.family in no_flow)) for i, f in signals
    )

"""The checks a miner's rules and labels must pass over its extracted facts: the miner test runs
them on the miner, and the mutation test on every mutant of it.

    check_rules             the rules parse, open with their /* predicate */ block, are safe and stratified
    backtest_fn             the walk-forward backtest misses nothing (FN = 0; a knee fitted when K ≠ {})
    fixtures_match_labels   at κ*, every labelled instance is flagged exactly when it is labelled +
    knee_binds              the verdicts depend on the knee: they change when the knee relation is
                            removed, and when the knee moves to another candidate (a knee written into
                            the rules as a constant, ``gt(S, 468)``, passes every other check when the
                            fitted knee is 468 too; this is the check that catches it)

A rules text that ``check_rules`` refuses is not checked further.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ouroboros_gates.miners.backtest import BacktestResult, backtest
from ouroboros_gates.miners.datalog import Program, Value
from ouroboros_gates.miners.errors import RulesError
from ouroboros_gates.miners.findings import Extracted
from ouroboros_gates.miners.labels import Labels
from ouroboros_gates.miners.rules import check_program

__all__ = [
    "BACKTEST_FN",
    "CHECKS",
    "CHECK_RULES",
    "FIXTURES_MATCH_LABELS",
    "KNEE_BINDS",
    "CheckRun",
    "run_checks",
]

CHECK_RULES = "check_rules"
BACKTEST_FN = "backtest_fn"
FIXTURES_MATCH_LABELS = "fixtures_match_labels"
KNEE_BINDS = "knee_binds"
CHECKS = (CHECK_RULES, BACKTEST_FN, FIXTURES_MATCH_LABELS, KNEE_BINDS)


@dataclass(frozen=True)
class CheckRun:
    """The checks' outcome: refused by ``check_rules`` (with why), or the failed checks with why,
    and the backtest they were judged on."""

    refused: str | None
    result: BacktestResult | None
    failures: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> tuple[str, ...]:
        """The names of the failed checks, in ``CHECKS`` order."""
        return tuple(name for name in CHECKS if name in self.failures)


def _backtest_fn(result: BacktestResult) -> str | None:
    if result.candidates and result.kappa_star is None:
        return "no knee candidate has FN = 0 on the fit half"
    if result.counts.fn:
        return f"FN = {len(result.counts.fn)} on the judged half: {', '.join(result.counts.fn)}"
    return None


def _fixtures_match(result: BacktestResult) -> str | None:
    flagged = result.at_kappa.flagged
    wrong = [row.instance for row in result.labels if (row.instance in flagged) != row.positive]
    if not wrong:
        return None
    return f"verdicts at κ* disagree with the labels: {_verdicts_shown(wrong, flagged)}"


def _verdicts_shown(instances: list[str], flagged: frozenset[str]) -> str:
    """Each instance with its verdict: ``r1 (flagged), r2 (not flagged)``."""
    return ", ".join(f"{i} ({'flagged' if i in flagged else 'not flagged'})" for i in instances)


def _knee_binds(result: BacktestResult) -> str | None:
    if not result.candidates:
        return None
    reference = result.kappa_star if result.kappa_star is not None else result.candidates[0]
    atoms = result.verdicts[reference].atoms
    if result.verdicts[None].atoms == atoms:
        return "the verdicts do not change when the knee relation is removed"
    if _same_at_other_knees(result, reference):
        return (
            "the verdicts do not change when the knee moves to another candidate: "
            "is it written as a constant?"
        )
    return None


def _same_at_other_knees(result: BacktestResult, reference: Value) -> bool:
    """Whether there is another candidate knee, and the verdicts at each are those at ``reference``."""
    atoms = result.verdicts[reference].atoms
    others = [kappa for kappa in result.candidates if kappa != reference]
    return bool(others) and all(result.verdicts[kappa].atoms == atoms for kappa in others)


def run_checks(
    miner: str, program: Program, verdicts: Sequence[str], labels: Labels, extracted: Extracted
) -> CheckRun:
    """Run every check on ``program`` and ``labels`` over the extracted facts."""
    try:
        rules = check_program(program)
    except RulesError as exc:
        return CheckRun(refused=exc.message, result=None)
    result = backtest(miner, rules, verdicts, labels, extracted)
    found = {
        BACKTEST_FN: _backtest_fn(result),
        FIXTURES_MATCH_LABELS: _fixtures_match(result),
        KNEE_BINDS: _knee_binds(result),
    }
    return CheckRun(None, result, {name: why for name, why in found.items() if why is not None})

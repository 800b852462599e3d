"""Findings, backtests, mutation reports and acceptances keep their own invariants."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from ouroboros_gates.schemas import (
    Backtest,
    Finding,
    MinerAcceptance,
    MutantOutcome,
    MutantResult,
    MutationReport,
    Record,
)

Examples = dict[str, Callable[[], Record]]


def _with(examples: Examples, name: str, **changes: Any) -> dict[str, Any]:
    return examples[name]().to_json_dict() | changes


def test_a_finding_carries_a_proof(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="proof"):
        Finding.model_validate(_with(examples, "Finding", proof=[]))


def test_backtest_counts_only_judged_instances(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="outside the judged half"):
        Backtest.model_validate(_with(examples, "Backtest", fn=["r1"]))
    with pytest.raises(ValidationError, match="both halves"):
        Backtest.model_validate(_with(examples, "Backtest", fit=["r1", "r3"]))
    with pytest.raises(ValidationError, match="not true positives"):
        Backtest.model_validate(_with(examples, "Backtest", lead_s={"r4": 1.0}))


def test_backtest_passes_only_without_a_miss(examples: Examples) -> None:
    backtest = examples["Backtest"]()
    assert isinstance(backtest, Backtest)
    assert backtest.passed
    assert not Backtest.model_validate(_with(examples, "Backtest", fn=["r4"])).passed
    assert not Backtest.model_validate(_with(examples, "Backtest", kappa_star=None)).passed
    summary = backtest.summary()
    assert (summary.tp, summary.fp, summary.fn, summary.families) == (1, 0, 0, 3)


def test_excluded_mutants_carry_their_reason() -> None:
    with pytest.raises(ValidationError, match="reason"):
        MutantResult(operator="drop_rule", description="drop rule 1", outcome=MutantOutcome.EQUIVALENT)


def test_mutation_counts_and_score_agree_with_the_mutants(examples: Examples) -> None:
    report = examples["MutationReport"]()
    assert isinstance(report, MutationReport)
    assert report.holds
    with pytest.raises(ValidationError, match="counts say"):
        MutationReport.model_validate(_with(examples, "MutationReport", killed=2))
    with pytest.raises(ValidationError, match="score"):
        MutationReport.model_validate(_with(examples, "MutationReport", score=0.75))
    empty = MutationReport(miner="m", mutants=(), killed=0, survived=0, score=None, floor=0.5)
    assert not empty.holds


def test_a_survivor_that_changes_a_labelled_verdict_breaks_the_gate(examples: Examples) -> None:
    payload = _with(examples, "MutationReport", floor=0.0)
    payload["mutants"][1]["changes_labelled_verdict"] = True
    assert not MutationReport.model_validate(payload).holds


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"test_passed": False}, "its test failed"),
        ({"mutation_score": 0.1}, "below the floor"),
    ],
)
def test_acceptance_requires_every_gate(examples: Examples, change: dict[str, Any], why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        MinerAcceptance.model_validate(_with(examples, "MinerAcceptance", **change))


def test_acceptance_requires_no_missed_offense(examples: Examples) -> None:
    payload = _with(examples, "MinerAcceptance")
    payload["backtest"]["fn"] = 1
    with pytest.raises(ValidationError, match="backtest FN = 1"):
        MinerAcceptance.model_validate(payload)

"""The loop's ledger rows refuse states the loop can never be in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from ouroboros_gates.schemas import (
    FixerSession,
    LabelerRun,
    MergeResult,
    PrecheckVerdict,
    ProposedLabel,
    Record,
    SeriesPoint,
)

Examples = dict[str, Callable[[], Record]]


def _with(examples: Examples, name: str, **changes: Any) -> dict[str, Any]:
    return examples[name]().to_json_dict() | changes


def test_launch_needs_a_found_instance_and_needs_labels_none(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="launch requires"):
        PrecheckVerdict.model_validate(_with(examples, "PrecheckVerdict", instances_found=[]))
    with pytest.raises(ValidationError, match="launch requires"):
        PrecheckVerdict.model_validate(_with(examples, "PrecheckVerdict", verdict="needs_labels"))
    queued = PrecheckVerdict(ticket=5, verdict="needs_labels", instances_named=("#4",), reason="no such PR")
    assert queued.proposal is None


def test_found_instances_were_named(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="did not name"):
        PrecheckVerdict.model_validate(_with(examples, "PrecheckVerdict", instances_found=["#999"]))


@pytest.mark.parametrize(
    ("positive", "acceptance"),
    [(True, "ACCEPTANCE_UNCHECKED"), (False, "ACCEPTANCE_ACCEPTED"), (False, "ACCEPTANCE_REJECTED")],
)
def test_only_negatives_are_unchecked(examples: Examples, positive: bool, acceptance: str) -> None:
    with pytest.raises(ValidationError, match="only a negative is unchecked"):
        ProposedLabel.model_validate(
            _with(examples, "ProposedLabel", positive=positive, acceptance=acceptance, why="w")
        )


def test_a_rejected_label_says_why(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="needs its why"):
        ProposedLabel.model_validate(
            _with(examples, "ProposedLabel", acceptance="ACCEPTANCE_REJECTED", why="")
        )


def test_labeler_run_ends_exactly_when_done(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="end time"):
        LabelerRun.model_validate(_with(examples, "LabelerRun", status="running"))
    live = LabelerRun.model_validate(_with(examples, "LabelerRun", status="yielding", ended=None))
    assert live.ended is None


@pytest.mark.parametrize(
    ("outcome", "pull_request"), [("ready", None), ("draft", None), ("no_pull_request", 7)]
)
def test_fixer_outcome_matches_its_pull_request(
    examples: Examples, outcome: str, pull_request: int | None
) -> None:
    with pytest.raises(ValidationError, match="pull request"):
        FixerSession.model_validate(
            _with(examples, "FixerSession", outcome=outcome, pull_request=pull_request)
        )


def test_refusals_carry_their_lines(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="refusal lines"):
        MergeResult.model_validate(_with(examples, "MergeResult", refusal=[]))
    with pytest.raises(ValidationError, match="no refusal lines"):
        MergeResult.model_validate(_with(examples, "MergeResult", outcome="merged"))
    skipped = MergeResult.model_validate(_with(examples, "MergeResult", outcome="skipped", refusal=[]))
    assert skipped.refusal == ()


def test_a_series_point_has_a_value_or_a_reason(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="needs a reason"):
        SeriesPoint.model_validate(_with(examples, "SeriesPoint", value=None, low=None, high=None))
    waiting = SeriesPoint.model_validate(
        _with(examples, "SeriesPoint", value=None, low=None, high=None, reason="fewer than 2 weeks")
    )
    assert waiting.value is None


@pytest.mark.parametrize(("low", "high"), [(1.0, None), (2.0, 1.0)])
def test_series_intervals_are_whole_and_ordered(examples: Examples, low: float, high: float | None) -> None:
    with pytest.raises(ValidationError, match="interval"):
        SeriesPoint.model_validate(_with(examples, "SeriesPoint", low=low, high=high))


@pytest.mark.parametrize("series", ["struggle", "Ouroboros.x", "ouroboros.", "ouroboros..x"])
def test_series_names_are_dotted(examples: Examples, series: str) -> None:
    with pytest.raises(ValidationError, match="series"):
        SeriesPoint.model_validate(_with(examples, "SeriesPoint", series=series))

"""Arguments, spans, facts, severities, scopes and timestamps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from ouroboros_gates.schemas import Fact, Finding, LabelRow, Number, Scope, Severity, Span, Text, utc

SEED_FINDING = (
    '{"miner":"draft-pr-late","rule":"invisible","subject":[{"text":"6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e31"}],'
    '"severity":"SEVERITY_S3","proof":[{"predicate":"gated","args":[{"text":"6c1f2a10"}],'
    '"span":{"file":"fixtures/4e31/events.jsonl","line":1}}]}'
)


def test_the_seeds_finding_line_parses() -> None:
    finding = Finding.model_validate_json(SEED_FINDING)
    assert finding.subject == (Text(text="6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e31"),)
    assert finding.severity is Severity.S3
    assert finding.proof[0].span == Span(file="fixtures/4e31/events.jsonl", line=1)
    assert finding.scope is Scope.TENANT  # unrecorded scope fails closed: it never leaves the tenant


def test_args_keep_the_seeds_wire_form() -> None:
    fact = Fact(predicate="score", args=(Text(text="r1"), Number(number=1259)))
    assert fact.to_json_dict()["args"] == [{"text": "r1"}, {"number": 1259.0}]
    parsed = Fact.model_validate({"predicate": "score", "args": [{"number": 2}, {"text": "2"}]})
    assert parsed.args == (Number(number=2), Text(text="2"))


@pytest.mark.parametrize("value", [True, "1.5", float("inf"), float("nan")])
def test_a_number_is_a_finite_number(value: object) -> None:
    with pytest.raises(ValidationError):
        Number.model_validate({"number": value})


def test_an_arg_is_text_or_number_never_both() -> None:
    with pytest.raises(ValidationError):
        Fact.model_validate({"predicate": "p", "args": [{"text": "a", "number": 1}]})


@pytest.mark.parametrize("line", [0, -1])
def test_span_lines_are_one_based(line: int) -> None:
    with pytest.raises(ValidationError, match="line"):
        Span(file="a.jsonl", line=line)


@pytest.mark.parametrize("predicate", ["", "Gated", "1x", "a-b"])
def test_predicates_are_datalog_names(predicate: str) -> None:
    with pytest.raises(ValidationError, match="predicate"):
        Fact(predicate=predicate)


def test_severities_and_scopes_use_the_seeds_spelling() -> None:
    assert [s.value for s in Severity] == ["SEVERITY_S0", "SEVERITY_S1", "SEVERITY_S2", "SEVERITY_S3"]
    assert [s.value for s in Scope] == ["generic", "tenant"]


def test_timestamps_are_normalised_to_utc() -> None:
    pacific = timezone(timedelta(hours=-7))
    row = LabelRow(
        instance="r", positive=False, start=datetime(2026, 10, 2, 11, 4, 45, tzinfo=pacific), source="t"
    )
    assert row.start == datetime(2026, 10, 2, 18, 4, 45, tzinfo=UTC)
    assert row.start.tzinfo is UTC
    assert row.to_json_dict()["start"] == "2026-10-02T18:04:45Z"


def test_a_naive_timestamp_is_refused_with_a_clear_error() -> None:
    with pytest.raises(ValidationError, match="timezone info") as caught:
        LabelRow(instance="r", positive=False, start=datetime(2026, 10, 2, 18, 4, 45), source="t")
    assert caught.value.errors()[0]["loc"] == ("start",)
    with pytest.raises(ValueError, match="timezone-aware"):
        utc(datetime(2026, 10, 2))

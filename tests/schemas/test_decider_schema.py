"""Feature records keep missing apart from zero; decisions keep undecided candidates visible."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from ouroboros_gates.schemas import Candidate, Decision, Example, FeatureRecord, Label, Record

Examples = dict[str, Callable[[], Record]]


def _with(examples: Examples, name: str, **changes: Any) -> dict[str, Any]:
    return examples[name]().to_json_dict() | changes


def test_feature_values_keep_their_types(examples: Examples) -> None:
    record = FeatureRecord.model_validate_json(examples["FeatureRecord"]().model_dump_json())
    assert record.x["qr.enabled_hits"] == 2 and type(record.x["qr.enabled_hits"]) is int
    assert record.x["qr.any"] is True
    assert record.x["qr.max_precision_estimate"] == 0.8
    assert record.x["eng.rung_max"] == "suspicion"
    assert record.x["delta.novelty"] is None


@pytest.mark.parametrize("name", ["FeatureRecord", "Example"])
def test_an_instrument_that_did_not_run_has_null_features(examples: Examples, name: str) -> None:
    payload = _with(examples, name)
    payload["x"]["delta.changed_lines"] = 0
    with pytest.raises(ValidationError, match=r"must be null: \['delta.changed_lines'\]"):
        (FeatureRecord if name == "FeatureRecord" else Example).model_validate(payload)


def test_feature_values_are_scalars(examples: Examples) -> None:
    payload = _with(examples, "FeatureRecord")
    payload["x"]["qr.enabled_hits"] = [1, 2]
    with pytest.raises(ValidationError):
        FeatureRecord.model_validate(payload)


def test_a_delta_record_names_its_base(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="base"):
        FeatureRecord.model_validate(_with(examples, "FeatureRecord", unit="delta"))


def test_candidate_key_is_an_envelope_string(examples: Examples) -> None:
    candidate = examples["Candidate"]()
    assert isinstance(candidate, Candidate)
    assert candidate.key.startswith("acme/shop@") and candidate.key.endswith("::checkout#injection")


def test_labels_are_zero_or_one(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="y"):
        Label.model_validate(_with(examples, "Label", y=2))


def test_probability_is_bounded(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="p"):
        Decision.model_validate(_with(examples, "Decision", p=1.5))


def test_an_undecided_candidate_is_advisory_unscored(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="undecided"):
        Decision.model_validate(_with(examples, "Decision", p=None))
    with pytest.raises(ValidationError, match="ADVISORY-unscored"):
        Decision.model_validate(_with(examples, "Decision", p=None, undecided="deadline"))
    late = Decision.model_validate(
        _with(examples, "Decision", p=None, undecided="deadline", action="ADVISORY")
    )
    assert late.undecided is not None and late.undecided.value == "deadline"

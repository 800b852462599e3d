"""Domain and fleet events."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from ouroboros_gates.schemas import (
    EVENT_TYPES,
    LabelTicket,
    Merged,
    MergeRefused,
    MessageRejected,
    Record,
    RunRecorded,
)

Examples = dict[str, Callable[[], Record]]


def _with(examples: Examples, name: str, **changes: Any) -> dict[str, Any]:
    return examples[name]().to_json_dict() | changes


def test_run_recorded_summarises_its_own_run(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="summary is for run"):
        RunRecorded.model_validate(_with(examples, "RunRecorded", run="another-run"))


def test_merge_events_carry_the_matching_outcome(examples: Examples) -> None:
    refused = examples["MergeRefused"]().to_json_dict()
    with pytest.raises(ValidationError, match="merged result"):
        Merged.model_validate(refused)
    merged = examples["Merged"]().to_json_dict()
    with pytest.raises(ValidationError, match="cannot carry a merged result"):
        MergeRefused.model_validate(merged)


def test_a_rejected_message_names_each_field() -> None:
    with pytest.raises(ValidationError) as caught:
        LabelTicket.model_validate(
            {"message_id": "m-12345678", "ticket": 0, "request": {"ticket": 1, "at": "x" * 500}, "x": 1}
        )
    event = MessageRejected.from_validation_error("labeler.label", "m-12345678", caught.value)
    fields = [error.field for error in event.errors]
    assert fields == ["ticket", "request.at", "x"]
    assert all(len(error.input) <= 121 for error in event.errors)
    assert event.errors[1].input.endswith("…")
    assert event.errors[0].input == "0"
    assert MessageRejected.model_validate_json(event.model_dump_json()) == event


def test_a_rejected_message_excerpts_inputs_that_are_not_json() -> None:
    class Odd(BaseModel):
        n: int

    with pytest.raises(ValidationError) as caught:
        Odd.model_validate({"n": object()})
    event = MessageRejected.from_validation_error("fleet.probe", None, caught.value)
    assert event.errors[0].input.startswith('"<object object')


def test_event_types_are_not_import_paths() -> None:
    assert all("." not in type_ for type_ in EVENT_TYPES)

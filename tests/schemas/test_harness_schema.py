"""Harness events keep their raw payload whole; run summaries stay consistent."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import ValidationError

from ouroboros_gates.schemas import HarnessEvent, Record, RunSummary, Usage

Examples = dict[str, Callable[[], Record]]


def test_raw_keeps_unknown_fields_through_a_round_trip(examples: Examples) -> None:
    event = examples["HarnessEvent"]()
    assert isinstance(event, HarnessEvent)
    again = HarnessEvent.model_validate_json(event.model_dump_json())
    assert again.raw["new_in_v9"] == [1, {"x": None}]


def test_typed_fields_stay_strict(examples: Examples) -> None:
    payload = examples["HarnessEvent"]().to_json_dict() | {"kind": "telepathy"}
    with pytest.raises(ValidationError, match="kind"):
        HarnessEvent.model_validate(payload)


@pytest.mark.parametrize("run", ["../etc", "a/b", "", ".hidden"])
def test_run_ids_cannot_name_a_path(examples: Examples, run: str) -> None:
    payload = examples["HarnessEvent"]().to_json_dict() | {"run": run}
    with pytest.raises(ValidationError, match="run"):
        HarnessEvent.model_validate(payload)


def test_usage_adds_up() -> None:
    total = Usage(input_tokens=1, cache_read_input_tokens=9) + Usage(
        output_tokens=2, cache_creation_input_tokens=3
    )
    assert total == Usage(
        input_tokens=1, output_tokens=2, cache_creation_input_tokens=3, cache_read_input_tokens=9
    )
    assert total.prompt_tokens == 13


def test_summary_is_consistent(examples: Examples) -> None:
    payload = examples["RunSummary"]().to_json_dict()
    with pytest.raises(ValidationError, match="malformed"):
        RunSummary.model_validate(payload | {"malformed": 13})
    with pytest.raises(ValidationError, match="before started_at"):
        RunSummary.model_validate(payload | {"ended_at": "2020-01-01T00:00:00Z"})

"""Commands: ids, bounds and cross-field checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from ouroboros_gates.schemas import IngestRun, LabelTicket, LaunchFixer, Message, Probe, Record, content_id

Examples = dict[str, Callable[[], Record]]


def _with(examples: Examples, name: str, **changes: Any) -> dict[str, Any]:
    return examples[name]().to_json_dict() | changes


def test_a_message_needs_an_idempotency_key() -> None:
    with pytest.raises(ValidationError, match="message_id"):
        Probe.model_validate({"probe": "p"})
    probe = Probe(message_id=content_id("fleet.probe", "p"), probe="p")
    assert isinstance(probe, Message) and probe.hold_s == 0.0 and probe.tenant == "default"


@pytest.mark.parametrize("hold_s", [-1, 600.5])
def test_probe_hold_is_bounded(examples: Examples, hold_s: float) -> None:
    with pytest.raises(ValidationError, match="hold_s"):
        Probe.model_validate(_with(examples, "Probe", hold_s=hold_s))


def test_label_ticket_request_is_for_the_same_ticket(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="request is for ticket 105"):
        LabelTicket.model_validate(_with(examples, "LabelTicket", ticket=106))
    alone = LabelTicket.model_validate(_with(examples, "LabelTicket", request=None))
    assert alone.request is None


def test_a_fixer_launches_only_on_a_launch_verdict(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="verdict is for ticket"):
        LaunchFixer.model_validate(_with(examples, "LaunchFixer", ticket=1))
    payload = _with(examples, "LaunchFixer")
    payload["verdict"] |= {"verdict": "needs_labels", "instances_found": []}
    with pytest.raises(ValidationError, match="needs_labels verdict"):
        LaunchFixer.model_validate(payload)


def test_ingest_paths_refuse_nul_bytes(examples: Examples) -> None:
    with pytest.raises(ValidationError, match="path"):
        IngestRun.model_validate(_with(examples, "IngestRun", path="runs/a\x00b"))

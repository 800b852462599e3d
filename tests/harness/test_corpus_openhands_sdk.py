"""OpenHands' agent SDK (OpenHands V1): a conversation's ``events/`` folder, one event per file as the SDK
serialises it (``kind``, ``id``, ``timestamp``, ``source``), read as one run with its tool calls, errors,
usage and cost, counted here independently of the reader."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ouroboros_gates.harness import Format, collect, read
from ouroboros_gates.schemas.kinds import HarnessKind

T0 = "2026-11-02T10:00:0{}.123456"  # the SDK writes local time without a zone


def _event(n: int, kind: str, source: str, **fields: Any) -> dict[str, Any]:
    return {
        "kind": kind,
        "id": f"00000000-0000-4000-8000-00000000000{n}",
        "timestamp": T0.format(n),
        "source": source,
        **fields,
    }


def _call(
    n: int, call_id: str, tool: str, action: dict[str, Any] | None, arguments: dict[str, Any]
) -> dict[str, Any]:
    tool_call = {"id": call_id, "name": tool, "arguments": json.dumps(arguments), "origin": "completion"}
    fields: dict[str, Any] = {
        "thought": [],
        "tool_name": tool,
        "tool_call_id": call_id,
        "tool_call": tool_call,
    }
    if action is not None:
        fields["action"] = action
    return _event(n, "ActionEvent", "agent", llm_response_id=f"resp-{n}", **fields)


def _observation(n: int, call_id: str, tool: str, said: str, **observation: Any) -> dict[str, Any]:
    content = [{"type": "text", "text": said}]
    body = {"kind": "ExecuteBashObservation", "content": content, "is_error": False, **observation}
    return _event(
        n,
        "ObservationEvent",
        "environment",
        tool_name=tool,
        tool_call_id=call_id,
        observation=body,
        action_id="a",
    )


def _stats(n: int, cost: float, usages: list[tuple[str, int, int, int, int]]) -> dict[str, Any]:
    token_usages = [
        {
            "model": "m",
            "prompt_tokens": p,
            "completion_tokens": c,
            "cache_read_tokens": r,
            "cache_write_tokens": w,
            "response_id": rid,
        }
        for rid, p, c, r, w in usages
    ]
    metrics = {"model_name": "m", "accumulated_cost": cost, "token_usages": token_usages}
    return _event(
        n,
        "ConversationStateUpdateEvent",
        "environment",
        key="stats",
        value={"usage_to_metrics": {"agent": metrics}},
    )


EVENTS = [
    _event(
        0,
        "SystemPromptEvent",
        "agent",
        system_prompt={"type": "text", "text": "You are OpenHands."},
        tools=[],
    ),
    _event(
        1,
        "MessageEvent",
        "user",
        llm_message={"role": "user", "content": [{"type": "text", "text": "fix it"}]},
    ),
    _call(
        2,
        "call_1",
        "terminal",
        {"kind": "ExecuteBashAction", "command": "pytest -q"},
        {"command": "pytest -q"},
    ),
    _observation(3, "call_1", "terminal", "1 failed", exit_code=1),
    _stats(4, 0.05, [("resp-2", 1000, 50, 800, 100)]),
    _call(
        5, "call_2", "file_editor", None, {"command": "view", "path": "/workspace/app.py"}
    ),  # not executable
    _event(
        6, "AgentErrorEvent", "agent", tool_name="file_editor", tool_call_id="call_2", error="missing field"
    ),
    _call(7, "call_3", "terminal", {"kind": "ExecuteBashAction", "command": "ls"}, {"command": "ls"}),
    _observation(8, "call_3", "terminal", "app.py", exit_code=0),
    # the stats are sent again with every change: resp-2 is repeated, resp-7 is new
    _stats(9, 0.09, [("resp-2", 1000, 50, 800, 100), ("resp-7", 1200, 30, 1000, 0)]),
]


@pytest.fixture
def conversation(tmp_path: Path) -> Path:
    events = tmp_path / "conversations" / "c0ffee" / "events"
    events.mkdir(parents=True)
    for n, event in enumerate(EVENTS):
        (events / f"event-{n:05d}-{event['id']}.json").write_text(json.dumps(event, indent=2))
    return events


def test_an_sdk_conversation_is_one_run_with_calls_errors_usage_and_cost(conversation: Path) -> None:
    [run] = collect([conversation]).runs
    assert run.formats == {Format.OPENHANDS.value: len(EVENTS)} and run.agent == "openhands"
    assert run.unread == [] and run.malformed_count == 0
    # counted by hand from EVENTS: three calls; call_1 exited 1, call_2 the scaffold could not run
    assert run.tool_calls == {"terminal": 2, "file_editor": 1}
    assert run.tool_errors == {"terminal": 1, "file_editor": 1}
    # each response once: resp-2 and resp-7; prompt tokens include the cached ones
    assert run.usage.as_dict() == {
        "input_tokens": (1000 - 800 - 100) + (1200 - 1000 - 0),
        "output_tokens": 50 + 30,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 800 + 1000,
    }
    assert run.cost_usd == pytest.approx(0.09)  # a cumulative counter: its last value
    assert run.started_at == datetime(2026, 11, 2, 10, 0, 0, 123456, tzinfo=UTC)


def test_sdk_events_are_typed_with_their_calls_and_results(conversation: Path) -> None:
    events = list(read(conversation))
    calls = [e for e in events if e.kind is HarnessKind.TOOL_CALL]
    results = [e for e in events if e.kind is HarnessKind.TOOL_RESULT]
    assert [(e.tool, e.tool_use_id, e.subtype) for e in calls] == [
        ("terminal", "call_1", "ExecuteBashAction"),
        ("file_editor", "call_2", "ActionEvent"),
        ("terminal", "call_3", "ExecuteBashAction"),
    ]
    assert calls[0].tool_input == {"command": "pytest -q"}
    assert calls[1].tool_input == {"command": "view", "path": "/workspace/app.py"}  # the model's arguments
    assert [(e.tool, e.is_error, e.result_text) for e in results] == [
        ("terminal", True, "1 failed"),
        ("file_editor", True, "missing field"),
        ("terminal", False, "app.py"),
    ]
    assert [e.kind for e in events[:2]] == [HarnessKind.OTHER, HarnessKind.USER]


def test_a_hook_refusal_is_a_failed_call(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    refused = _event(
        3,
        "UserRejectObservation",
        "environment",
        tool_name="terminal",
        tool_call_id="call_1",
        rejection_reason="blocked by hook",
        rejection_source="hook",
        action_id="a",
    )
    log.write_text("".join(json.dumps(e) + "\n" for e in (EVENTS[2], refused)))
    [run] = collect([log]).runs
    assert run.tool_calls == {"terminal": 1} and run.tool_errors == {"terminal": 1}

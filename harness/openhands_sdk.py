"""OpenHands' agent SDK (``openhands-sdk``, OpenHands V1): its events as the SDK serialises them.

Every event is a pydantic model dumped with its class name in ``kind``, an ``id`` (a UUID string), a
``timestamp`` (local time without a zone: read as UTC, as the older events are) and a ``source`` (``agent``,
``user``, ``environment``). A conversation's ``events/`` folder holds one per file; the agent server streams
them over its websocket and lists them from ``/api/conversations/{id}/events``.

- A tool call: an ``ActionEvent`` (``tool_name``, ``tool_call_id``, the parsed ``action``, the model's
  ``tool_call`` with its ``arguments``).
- Its result: the ``ObservationEvent`` naming the same ``tool_call_id`` (``observation.content``, a list of
  text parts; ``observation.is_error``; a command's ``exit_code``), an ``AgentErrorEvent`` (the scaffold
  could not run the call: always an error) or a ``UserRejectObservation`` (refused by the user or a
  ``PreToolUse`` hook: an error, as a gate's denial is in Claude Code's logs).
- Usage and cost: not on the actions but in the conversation's stats, which a ``ConversationStateUpdateEvent``
  carries (``key`` ``stats``, or ``full_state`` with ``stats`` inside): ``usage_to_metrics`` holds one metrics
  record per LLM (the agent's, a condenser's), each with ``token_usages`` (one per response, by
  ``response_id``: counted once however often the stats are sent) and ``accumulated_cost``, a cumulative
  counter (their sum is the conversation's, folded by ``harness.cost``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ouroboros_gates.harness.context import LineContext, ReadState, number, text
from ouroboros_gates.harness.line import LineEvent, Tokens
from ouroboros_gates.schemas.kinds import HarnessKind

__all__ = ["RESULT_KINDS", "cost_of", "is_sdk_event", "sdk_events", "sdk_usage"]

RESULT_KINDS = frozenset({"ObservationEvent", "AgentErrorEvent", "UserRejectObservation"})
"""The events that answer a tool call (by its ``tool_call_id``)."""
_STATE = "ConversationStateUpdateEvent"


def is_sdk_event(doc: dict[str, Any]) -> bool:
    """Whether ``doc`` is one event of OpenHands' agent SDK: a ``kind`` naming an event class, with the
    ``id``, ``timestamp`` and ``source`` every SDK event has."""
    kind = doc.get("kind")
    return (
        isinstance(kind, str)
        and (kind.endswith("Event") or kind in RESULT_KINDS)
        and isinstance(doc.get("id"), str)
        and isinstance(doc.get("source"), str)
        and isinstance(doc.get("timestamp"), str)
    )


def sdk_events(
    doc: dict[str, Any], ctx: LineContext, state: ReadState, usage: tuple[Tokens | None, float | None]
) -> Iterator[LineEvent]:
    """The events of one SDK event: a tool call or its result (else one event for it), with ``usage`` (the
    tokens first reported here and the cumulative cost: ``sdk_usage``)."""
    kind = doc["kind"]
    common: dict[str, Any] = {"session": ctx.run, "usage": usage[0], "total_cost_usd": usage[1]}
    call_id, tool = text(doc.get("tool_call_id")), text(doc.get("tool_name"))
    if kind == "ActionEvent" and call_id is not None and tool is not None:
        state.called(call_id, tool)
        yield ctx.event(
            HarnessKind.TOOL_CALL,
            subtype=_action_kind(doc) or kind,
            tool=tool,
            tool_use_id=call_id,
            tool_input=_input(doc),
            **common,
        )
        return
    if kind in RESULT_KINDS and call_id is not None:
        failed, said = _outcome(doc)
        yield ctx.event(
            HarnessKind.TOOL_RESULT,
            subtype=kind,
            tool=state.name_of(call_id) or tool,
            tool_use_id=call_id,
            is_error=failed,
            result_text=said,
            **common,
        )
        return
    event_kind = HarnessKind.USER if doc.get("source") == "user" else HarnessKind.OTHER
    yield ctx.event(event_kind, subtype=kind, **common)


def sdk_usage(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The metrics records of the conversation stats a state update carries (none for another event)."""
    if doc.get("kind") != _STATE:
        return []
    value = doc.get("value")
    stats = value if doc.get("key") == "stats" else value.get("stats") if isinstance(value, dict) else None
    metrics = stats.get("usage_to_metrics") if isinstance(stats, dict) else None
    return [m for m in metrics.values() if isinstance(m, dict)] if isinstance(metrics, dict) else []


def _action_kind(doc: dict[str, Any]) -> str | None:
    action = doc.get("action")
    return text(action.get("kind")) if isinstance(action, dict) else None


def _input(doc: dict[str, Any]) -> dict[str, Any] | None:
    """What the call asked for: the parsed action (its fields but ``kind``), else the model's arguments."""
    action = doc.get("action")
    if isinstance(action, dict):
        return {key: value for key, value in action.items() if key != "kind"}
    call = doc.get("tool_call")
    arguments = call.get("arguments") if isinstance(call, dict) else None
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else None
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


_FAILED_WITH = {"AgentErrorEvent": "error", "UserRejectObservation": "rejection_reason"}
"""The events that are a failed call by their kind, and the field that says why."""


def _outcome(doc: dict[str, Any]) -> tuple[bool, str | None]:
    """Whether the call failed, and what its result said."""
    reason = _FAILED_WITH.get(doc["kind"])
    if reason is not None:
        return True, text(doc.get(reason))
    observation = doc.get("observation")
    if not isinstance(observation, dict):
        return False, None
    return observation.get("is_error") is True or _exited(observation), _said(observation)


def _said(observation: dict[str, Any]) -> str | None:
    """The text parts of an observation's content joined (None when it has none)."""
    parts = observation.get("content")
    if not isinstance(parts, list):
        return None
    said = "".join(
        part["text"] for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str)
    )
    return said or None


def _exited(observation: dict[str, Any]) -> bool:
    """Whether the observation reports a nonzero integer exit code."""
    code = observation.get("exit_code")
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


def cost_of(records: list[dict[str, Any]]) -> float | None:
    """The conversation's cumulative cost: the sum of each LLM's ``accumulated_cost`` (None when none
    reports one)."""
    costs = [found for record in records if (found := number(record.get("accumulated_cost"))) is not None]
    return sum(costs) if costs else None

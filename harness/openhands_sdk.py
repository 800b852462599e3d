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

from ouroboros_gates.harness.context import (
    LineContext,
    ReadState,
    field_at,
    nonzero_exit,
    number,
    text,
    text_parts,
)
from ouroboros_gates.harness.line import LineEvent, Tokens
from ouroboros_gates.schemas.kinds import HarnessKind

__all__ = ["RESULT_KINDS", "cost_of", "is_sdk_event", "sdk_events", "sdk_usage", "source_kind"]

RESULT_KINDS = frozenset({"ObservationEvent", "AgentErrorEvent", "UserRejectObservation"})
"""The events that answer a tool call (by its ``tool_call_id``)."""
_STATE = "ConversationStateUpdateEvent"


def is_sdk_event(doc: dict[str, Any]) -> bool:
    """Whether ``doc`` is one event of OpenHands' agent SDK: a ``kind`` naming an event class, with the
    ``id``, ``timestamp`` and ``source`` every SDK event has."""
    return _is_event_kind(doc.get("kind")) and _has_event_fields(doc)


def _is_event_kind(kind: Any) -> bool:
    """Whether ``kind`` names one of the SDK's event classes."""
    return isinstance(kind, str) and (kind.endswith("Event") or kind in RESULT_KINDS)


def _has_event_fields(doc: dict[str, Any]) -> bool:
    """Whether ``doc`` has the ``id``, ``source`` and ``timestamp`` strings every SDK event has."""
    return (
        isinstance(doc.get("id"), str)
        and isinstance(doc.get("source"), str)
        and isinstance(doc.get("timestamp"), str)
    )


def source_kind(doc: dict[str, Any]) -> HarnessKind:
    """The kind of an OpenHands event that is no tool call nor result: ``user`` when the user sent it."""
    return HarnessKind.USER if doc.get("source") == "user" else HarnessKind.OTHER


def sdk_events(
    doc: dict[str, Any], ctx: LineContext, state: ReadState, usage: tuple[Tokens | None, float | None]
) -> Iterator[LineEvent]:
    """The events of one SDK event: a tool call or its result (else one event for it), with ``usage`` (the
    tokens first reported here and the cumulative cost: ``sdk_usage``)."""
    kind = doc["kind"]
    common: dict[str, Any] = {"session": ctx.run, "usage": usage[0], "total_cost_usd": usage[1]}
    call_id, tool = text(doc.get("tool_call_id")), text(doc.get("tool_name"))
    if kind == "ActionEvent" and call_id is not None and tool is not None:
        yield _sdk_call(doc, ctx, state, call_id, tool, common)
        return
    if kind in RESULT_KINDS and call_id is not None:
        yield _sdk_result(doc, ctx, state, call_id, tool, common)
        return
    yield ctx.event(source_kind(doc), subtype=kind, **common)


def _sdk_call(
    doc: dict[str, Any], ctx: LineContext, state: ReadState, call_id: str, tool: str, common: dict[str, Any]
) -> LineEvent:
    """The tool call an ``ActionEvent`` makes."""
    state.called(call_id, tool)
    return ctx.event(
        HarnessKind.TOOL_CALL,
        subtype=_action_kind(doc) or doc["kind"],
        tool=tool,
        tool_use_id=call_id,
        tool_input=_input(doc),
        **common,
    )


def _sdk_result(
    doc: dict[str, Any],
    ctx: LineContext,
    state: ReadState,
    call_id: str,
    tool: str | None,
    common: dict[str, Any],
) -> LineEvent:
    """The result of the tool call ``call_id``: an observation, an agent error or a rejection."""
    failed, said = _outcome(doc)
    return ctx.event(
        HarnessKind.TOOL_RESULT,
        subtype=doc["kind"],
        tool=state.name_of(call_id) or tool,
        tool_use_id=call_id,
        is_error=failed,
        result_text=said,
        **common,
    )


def sdk_usage(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The metrics records of the conversation stats a state update carries (none for another event)."""
    if doc.get("kind") != _STATE:
        return []
    metrics = field_at(_stats(doc), "usage_to_metrics")
    return [m for m in metrics.values() if isinstance(m, dict)] if isinstance(metrics, dict) else []


def _stats(doc: dict[str, Any]) -> Any:
    """The conversation stats a state update carries: its value (key ``stats``), or a full state's."""
    value = doc.get("value")
    return value if doc.get("key") == "stats" else field_at(value, "stats")


def _action_kind(doc: dict[str, Any]) -> str | None:
    return text(field_at(doc, "action", "kind"))


def _input(doc: dict[str, Any]) -> dict[str, Any] | None:
    """What the call asked for: the parsed action (its fields but ``kind``), else the model's arguments."""
    action = doc.get("action")
    if isinstance(action, dict):
        return {key: value for key, value in action.items() if key != "kind"}
    return _arguments(doc)


def _arguments(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The arguments the model gave its tool call, when they are a JSON object."""
    arguments = field_at(doc, "tool_call", "arguments")
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
    return observation.get("is_error") is True or nonzero_exit(observation.get("exit_code")), _said(
        observation
    )


def _said(observation: dict[str, Any]) -> str | None:
    """The text parts of an observation's content joined (None when it has none)."""
    parts = observation.get("content")
    if not isinstance(parts, list):
        return None
    return "".join(text_parts(parts)) or None


def cost_of(records: list[dict[str, Any]]) -> float | None:
    """The conversation's cumulative cost: the sum of each LLM's ``accumulated_cost`` (None when none
    reports one)."""
    costs = [found for record in records if (found := number(record.get("accumulated_cost"))) is not None]
    return sum(costs) if costs else None

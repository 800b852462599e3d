"""OpenHands event lists: the events of a conversation as OpenHands serialises them (``event_to_dict``).

A trajectory (``--save-trajectory-path``, the ``/trajectory`` API) is a JSON array of events; a conversation's
``events/`` folder holds one per file; an evaluation's ``output.jsonl`` line holds them as ``history``. Every
event has ``id``, ``timestamp`` and ``source`` (``agent``, ``user``, ``environment``); an **action** names
itself in ``action`` (``run``, ``run_ipython``, ``read``, ``edit``, ``write``, ``browse``…, or ``message``,
``finish``, ``think``, ``system`` that run nothing) with its ``args`` (``timestamp`` is local time without a
zone: read as UTC); an **observation** names itself in
``observation`` and answers the action whose ``id`` is its ``cause``, with ``content`` and ``extras`` (a
command's ``extras.metadata.exit_code``). An action the model asked for carries ``tool_call_metadata``
(``function_name``, ``tool_call_id``); events carry ``llm_metrics`` (``accumulated_cost``, and
``token_usages``, one per model response with its ``response_id``). The agent SDK's events (OpenHands V1,
``kind`` naming the event's class) are read by ``openhands_sdk``.

- A tool call: an agent's action that runs something (``TOOL_ACTIONS``) or that carries tool-call metadata;
  its id is the ``tool_call_id`` (else ``event-<id>``), its tool the function's name (else the action's).
- A tool result: an observation with a ``cause``, joined to that call. It is an error when the observation is
  ``error`` (or the user rejected the action), when ``success`` is false, or when a command's exit code is
  not 0 (``-1``: it did not finish), as Claude Code marks a Bash call that exits non-zero.
- Usage: each response's ``token_usages`` entry once, by ``response_id`` (every event repeats the list so
  far): ``prompt_tokens`` includes the cached ones, as litellm reports them, so input = prompt - cache read
  - cache write. Cost: ``accumulated_cost``, a cumulative counter (``harness.cost`` folds it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from ouroboros_gates.harness.context import (
    LineContext,
    ReadState,
    as_object,
    field_at,
    nonzero_exit,
    number,
    response_key,
    text,
    timestamp,
)
from ouroboros_gates.harness.line import LineEvent, Tokens
from ouroboros_gates.harness.openhands_sdk import cost_of, is_sdk_event, sdk_events, sdk_usage, source_kind
from ouroboros_gates.schemas.kinds import HarnessKind

__all__ = ["TOOL_ACTIONS", "is_openhands_event", "openhands_events"]

TOOL_ACTIONS = frozenset(
    {
        "run",
        "run_ipython",
        "read",
        "write",
        "edit",
        "browse",
        "browse_interactive",
        "delegate",
        "call_tool_mcp",
    }
)
"""The actions that run something in the sandbox (``message``, ``finish``, ``think``, ``system`` do not)."""
_REFUSED = frozenset({"error", "user_rejected"})
_ZONE = re.compile(r"[+-]")
"""A zone offset's sign, looked for past the date (whose own ``-`` are not one)."""


def is_openhands_event(doc: dict[str, Any]) -> bool:
    """Whether ``doc`` is one OpenHands event (an action or an observation with its source), or one of its
    agent SDK's (``openhands_sdk``)."""
    return (
        isinstance(doc.get("source"), str)
        and (isinstance(doc.get("action"), str) or isinstance(doc.get("observation"), str))
    ) or is_sdk_event(doc)


def _call_id(doc: dict[str, Any]) -> str | None:
    found = text(field_at(doc, "tool_call_metadata", "tool_call_id"))
    return found or (f"event-{doc['id']}" if isinstance(doc.get("id"), int) else None)


def _failed(doc: dict[str, Any]) -> bool:
    """Whether an observation reports a failure: an error, a rejection, ``success`` false, or a command's
    nonzero exit code."""
    return (
        doc.get("observation") in _REFUSED
        or doc.get("success") is False
        or nonzero_exit(field_at(doc, "extras", "metadata", "exit_code"))
    )


def openhands_events(doc: dict[str, Any], ctx: LineContext, state: ReadState) -> Iterator[LineEvent]:
    """The events of one OpenHands event: a tool call or result (else one event for it), and its usage."""
    ctx = ctx.timed(_moment(doc.get("timestamp")))
    if is_sdk_event(doc):
        yield from sdk_events(doc, ctx, state, _sdk_usage(doc, state))
        return
    yield _event(doc, ctx, state)


def _event(doc: dict[str, Any], ctx: LineContext, state: ReadState) -> LineEvent:
    """The one event of an action or observation: a tool call, a tool result, or neither."""
    usage, cost = _usage(doc.get("llm_metrics"), state)
    common: dict[str, Any] = {"session": ctx.run, "usage": usage, "total_cost_usd": cost}
    action, observation = text(doc.get("action")), text(doc.get("observation"))
    tool = _tool(doc, action)
    if action is not None and tool is not None:
        return _tool_call(doc, ctx, state, action, tool, common)
    call_id = _caused_by(doc, state)
    if observation is not None and call_id is not None:
        return _tool_result(doc, ctx, state, observation, call_id, common)
    return ctx.event(source_kind(doc), subtype=action or observation, **common)


def _caused_by(doc: dict[str, Any], state: ReadState) -> str | None:
    """The tool call whose action the event's ``cause`` names, when one was seen."""
    cause = doc.get("cause")
    return state.by_event.get(cause) if isinstance(cause, int) else None


def _tool(doc: dict[str, Any], action: str | None) -> str | None:
    """The tool an agent's action calls (the function the model named, else the action), when it runs
    something or the model asked for it as a tool; None for any other event."""
    function = text(field_at(doc, "tool_call_metadata", "function_name"))
    if action is None or not _calls_tool(doc, action, function):
        return None
    return function or action


def _calls_tool(doc: dict[str, Any], action: str, function: str | None) -> bool:
    """Whether an action is the agent's and runs something or was asked for as a tool."""
    return doc.get("source") == "agent" and (action in TOOL_ACTIONS or bool(function))


def _tool_call(
    doc: dict[str, Any], ctx: LineContext, state: ReadState, action: str, tool: str, common: dict[str, Any]
) -> LineEvent:
    """The call ``action`` makes of ``tool``."""
    call_id, args = _call_id(doc), doc.get("args")
    _remember_cause(doc, state, call_id)
    state.called(call_id, tool)
    return ctx.event(
        HarnessKind.TOOL_CALL,
        subtype=action,
        tool=tool,
        tool_use_id=call_id,
        tool_input=as_object(args),
        **common,
    )


def _remember_cause(doc: dict[str, Any], state: ReadState, call_id: str | None) -> None:
    """Records the call an action made by the action's id: the ``cause`` its observation will name."""
    if isinstance(doc.get("id"), int) and call_id:
        state.by_event[doc["id"]] = call_id


def _tool_result(
    doc: dict[str, Any],
    ctx: LineContext,
    state: ReadState,
    observation: str,
    call_id: str,
    common: dict[str, Any],
) -> LineEvent:
    """The ``observation`` that answers the tool call ``call_id``."""
    content = doc.get("content")
    return ctx.event(
        HarnessKind.TOOL_RESULT,
        subtype=observation,
        tool=state.name_of(call_id),
        tool_use_id=call_id,
        is_error=_failed(doc),
        result_text=content if isinstance(content, str) and content else None,
        **common,
    )


def _moment(value: Any) -> datetime | None:
    """An event's time: OpenHands writes the machine's local time without a zone; it is read as UTC (a run's
    durations are exact, its hours off by the machine's offset), an instant with a zone as it says."""
    return timestamp(f"{value}Z" if _is_zoneless(value) else value)


def _is_zoneless(value: Any) -> bool:
    """Whether ``value`` is a local time without a zone (it ends in a digit, no offset past the date)."""
    return isinstance(value, str) and value[-1:].isdigit() and not _ZONE.search(value[10:])


def _usage(metrics: Any, state: ReadState) -> tuple[Tokens | None, float | None]:
    """The usage of the responses this event's metrics list for the first time, and the cumulative cost."""
    if not isinstance(metrics, dict):
        return None, None
    found: Tokens | None = None
    for entry in _token_usages(metrics):
        found = _plus(found, _first_count(entry, state))
    return found, number(metrics.get("accumulated_cost"))


def _token_usages(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-response entries of an event's metrics (``token_usages``)."""
    usages = metrics.get("token_usages")
    return [entry for entry in usages if isinstance(entry, dict)] if isinstance(usages, list) else []


def _first_count(entry: dict[str, Any], state: ReadState) -> Tokens | None:
    """The tokens of one response not counted yet (by its ``response_id``; an entry without one is never
    matched, so never counted)."""
    key = response_key(entry.get("response_id"), None)
    return state.ledger.add(key, _tokens(entry)) if key is not None else None


def _plus(found: Tokens | None, new: Tokens | None) -> Tokens | None:
    """Two optional counts added (None when both are)."""
    if found is None:
        return new
    return found if new is None else found + new


def _sdk_usage(doc: dict[str, Any], state: ReadState) -> tuple[Tokens | None, float | None]:
    """The tokens an SDK state update reports for the first time (each LLM's responses, once each by
    ``response_id``) and the conversation's cumulative cost."""
    records = sdk_usage(doc)
    found: Tokens | None = None
    for record in records:
        found = _plus(found, _usage(record, state)[0])
    return found, cost_of(records)


def _tokens(entry: dict[str, Any]) -> Tokens:
    counts = {
        name: int(number(entry.get(name)) or 0)
        for name in ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens")
    }
    cached = counts["cache_read_tokens"] + counts["cache_write_tokens"]
    return Tokens(
        input_tokens=max(counts["prompt_tokens"] - cached, 0),
        output_tokens=counts["completion_tokens"],
        cache_creation_input_tokens=counts["cache_write_tokens"],
        cache_read_input_tokens=counts["cache_read_tokens"],
    )

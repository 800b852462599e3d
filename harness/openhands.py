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

from ouroboros_gates.harness.context import LineContext, ReadState, number, response_key, text, timestamp
from ouroboros_gates.harness.line import LineEvent, Tokens
from ouroboros_gates.harness.openhands_sdk import cost_of, is_sdk_event, sdk_events, sdk_usage
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
    metadata = doc.get("tool_call_metadata")
    found = text(metadata.get("tool_call_id")) if isinstance(metadata, dict) else None
    return found or (f"event-{doc['id']}" if isinstance(doc.get("id"), int) else None)


def _failed(doc: dict[str, Any]) -> bool:
    if doc.get("observation") in _REFUSED or doc.get("success") is False:
        return True
    extras = doc.get("extras")
    metadata = extras.get("metadata") if isinstance(extras, dict) else None
    code = metadata.get("exit_code") if isinstance(metadata, dict) else None
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


def openhands_events(doc: dict[str, Any], ctx: LineContext, state: ReadState) -> Iterator[LineEvent]:
    """The events of one OpenHands event: a tool call or result (else one event for it), and its usage."""
    moment = _moment(doc.get("timestamp"))
    if moment is not None:
        ctx = LineContext(ctx.run, ctx.span, ctx.raw, moment)
    if is_sdk_event(doc):
        yield from sdk_events(doc, ctx, state, _sdk_usage(doc, state))
        return
    usage, cost = _usage(doc.get("llm_metrics"), state)
    common: dict[str, Any] = {"session": ctx.run, "usage": usage, "total_cost_usd": cost}
    action, observation = text(doc.get("action")), text(doc.get("observation"))
    tool = _tool(doc, action)
    if action is not None and tool is not None:
        yield _tool_call(doc, ctx, state, action, tool, common)
        return
    cause = doc.get("cause")
    call_id = state.by_event.get(cause) if isinstance(cause, int) else None
    if observation is not None and call_id is not None:
        yield _tool_result(doc, ctx, state, observation, call_id, common)
        return
    kind = HarnessKind.USER if doc.get("source") == "user" else HarnessKind.OTHER
    yield ctx.event(kind, subtype=action or observation, **common)


def _tool(doc: dict[str, Any], action: str | None) -> str | None:
    """The tool an agent's action calls (the function the model named, else the action), when it runs
    something or the model asked for it as a tool; None for any other event."""
    metadata = doc.get("tool_call_metadata")
    function = text(metadata.get("function_name")) if isinstance(metadata, dict) else None
    if action is None or doc.get("source") != "agent" or not (action in TOOL_ACTIONS or function):
        return None
    return function or action


def _tool_call(
    doc: dict[str, Any], ctx: LineContext, state: ReadState, action: str, tool: str, common: dict[str, Any]
) -> LineEvent:
    """The call ``action`` makes of ``tool``."""
    call_id, args = _call_id(doc), doc.get("args")
    if isinstance(doc.get("id"), int) and call_id:
        state.by_event[doc["id"]] = call_id  # the cause its observation will name
    state.called(call_id, tool)
    tool_input = args if isinstance(args, dict) else None
    return ctx.event(
        HarnessKind.TOOL_CALL, subtype=action, tool=tool, tool_use_id=call_id, tool_input=tool_input, **common
    )


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
    zoneless = isinstance(value, str) and value[-1:].isdigit() and not _ZONE.search(value[10:])
    return timestamp(f"{value}Z" if zoneless else value)


def _usage(metrics: Any, state: ReadState) -> tuple[Tokens | None, float | None]:
    """The usage of the responses this event's metrics list for the first time, and the cumulative cost."""
    if not isinstance(metrics, dict):
        return None, None
    found: Tokens | None = None
    usages = metrics.get("token_usages")
    for entry in usages if isinstance(usages, list) else []:
        if not isinstance(entry, dict):
            continue
        reported = _tokens(entry)
        key = response_key(entry.get("response_id"), None)
        new = state.ledger.add(key, reported) if key is not None else None  # an entry without id: unmatched
        found = new if found is None else (found if new is None else found + new)
    return found, number(metrics.get("accumulated_cost"))


def _sdk_usage(doc: dict[str, Any], state: ReadState) -> tuple[Tokens | None, float | None]:
    """The tokens an SDK state update reports for the first time (each LLM's responses, once each by
    ``response_id``) and the conversation's cumulative cost."""
    records = sdk_usage(doc)
    found: Tokens | None = None
    for record in records:
        new, _ = _usage(record, state)
        found = new if found is None else (found if new is None else found + new)
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

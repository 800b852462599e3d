"""Claude Code transcript lines (``~/.claude/projects/<project>/<session>.jsonl``).

Entries are ``user``, ``assistant``, ``system``, ``summary``, ``progress``, ``file-history-snapshot``,
``queue-operation``…, with ``timestamp``, ``sessionId`` and ``uuid``; messages carry content blocks
(``text``, ``thinking``, ``tool_use``, ``tool_result`` with ``is_error``) and ``assistant`` messages a
``usage``. What the reader must get right:

- One API response is split over several lines, one per content block, each repeating the response's
  ``usage`` (and a later one may report more ``output_tokens``): usage counts once per response, keyed
  by ``message.id`` with ``requestId`` (``UsageLedger``), never once per line.
- Ids redacted to ``REDACTED`` take no part in that key, so two redacted responses are never merged.
- Subagent work appears as sidechain lines (``isSidechain: true``, in the subagent's own transcript
  ``<session>/subagents/agent-<id>.jsonl``) and nested in the parent's ``progress`` lines
  (``data.type == "agent_progress"``, ``data.message`` a whole user/assistant entry): both are read, and
  their events name the subagent as ``agent``. A nested entry is a relay (``relay``): when the run reads
  the subagent's own transcript too (``ReadState.own_agents``), the relay repeats it, so it adds no usage
  and is not counted (``Reader.repeats``); otherwise it is the subagent's only record, and counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ouroboros_gates.harness.context import (
    LineContext,
    ReadState,
    as_object,
    block_events,
    field_at,
    response_key,
    text,
    timestamp,
    usage,
)
from ouroboros_gates.harness.line import LineEvent, Tokens
from ouroboros_gates.schemas.kinds import HarnessKind

__all__ = ["transcript_events"]

_KINDS = {"user": HarnessKind.USER, "assistant": HarnessKind.ASSISTANT, "system": HarnessKind.SYSTEM}


def transcript_events(doc: dict[str, Any], ctx: LineContext, state: ReadState) -> Iterator[LineEvent]:
    """The events of one transcript line: one for the line, one per tool block, and its subagent's."""
    session = text(doc.get("sessionId"))
    yield from _entry(doc, ctx, state, session, _sidechain_agent(doc))
    nested = _relayed(doc)
    if nested is not None:
        # A subagent's message, relayed while it runs: same session, its own agent id.
        agent = text(doc["data"].get("agentId")) or "subagent"
        yield from _entry(nested, ctx, state, session, agent, relay=True)


def _sidechain_agent(doc: dict[str, Any]) -> str | None:
    """The subagent whose sidechain line this is (its ``agentId``, else ``sidechain``); None for the main
    agent's lines."""
    return (text(doc.get("agentId")) or "sidechain") if doc.get("isSidechain") is True else None


def _relayed(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The entry a ``progress`` line relays from a running subagent (``data.message``), when it relays one."""
    return as_object(field_at(doc, "data", "message")) if doc.get("type") == "progress" else None


def _entry(
    doc: dict[str, Any],
    ctx: LineContext,
    state: ReadState,
    session: str | None,
    agent: str | None,
    relay: bool = False,
) -> Iterator[LineEvent]:
    line_type = text(doc.get("type")) or ""
    ctx = ctx.timed(timestamp(doc.get("timestamp")))
    kind = _KINDS.get(line_type, HarnessKind.OTHER)
    message = doc.get("message")
    counted = _usage(doc, message, state) if _adds_usage(line_type, state, agent, relay) else None
    if not relay or kind is not HarnessKind.OTHER:
        subtype = _subtype(doc, kind, line_type)
        yield ctx.event(kind, subtype=subtype, session=session, agent=agent, usage=counted, relay=relay)
    yield from block_events(ctx, state, message, session=session, agent=agent, relay=relay)


def _adds_usage(line_type: str, state: ReadState, agent: str | None, relay: bool) -> bool:
    """Whether the line's usage counts: an assistant line's does, unless it relays a subagent whose own
    transcript the run reads (that transcript counts it)."""
    return line_type == "assistant" and not (relay and agent in state.own_agents)


def _usage(doc: dict[str, Any], message: Any, state: ReadState) -> Tokens | None:
    """The usage an assistant line adds: its response's, once per response (``UsageLedger``)."""
    if not isinstance(message, dict):
        return None
    reported, key = usage(message.get("usage")), response_key(message.get("id"), doc.get("requestId"))
    return None if reported is None else state.ledger.add(key, reported)


def _subtype(doc: dict[str, Any], kind: HarnessKind, line_type: str) -> str | None:
    subtype = text(doc.get("subtype"))
    if kind is not HarnessKind.OTHER:
        return subtype
    return _progress_type(doc) or subtype or line_type


def _progress_type(doc: dict[str, Any]) -> str | None:
    """What a ``progress`` line reports (``agent_progress``, ``hook_progress``…), when it says."""
    data = doc.get("data")
    return text(data.get("type")) if isinstance(data, dict) else None

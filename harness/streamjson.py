"""Claude Code ``--output-format stream-json`` lines: ``system``, ``assistant``, ``user``, ``result``.

Each line yields one event for itself and one per ``tool_use``/``tool_result`` block it carries. Only the
``result`` line's ``usage`` is counted: it is authoritative for its turn, while an ``assistant`` line
carries a partial snapshot taken while the response streamed (kept in ``raw``, never summed).
``total_cost_usd`` is cumulative within one process and restarts from zero when the process is reopened;
``harness.cost`` folds it. A ``result``'s ``permission_denials`` become tool results that are
errors (a gate denial), joined to their call by ``tool_use_id``. A line whose ``parent_tool_use_id`` is
set is a subagent's: its events name that Task call as their ``agent``. A turn whose ``assistant`` lines are
followed by no ``result`` (a process killed, or still running) is remembered in ``ReadState.open_turns``: the
reader notes it, since its usage is not counted anywhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ouroboros_gates.harness.context import (
    LineContext,
    ReadState,
    array,
    as_object,
    block_events,
    number,
    text,
    usage,
)
from ouroboros_gates.harness.line import LineEvent
from ouroboros_gates.schemas.kinds import HarnessKind

__all__ = ["KINDS", "stream_events"]

KINDS = {
    "system": HarnessKind.SYSTEM,
    "assistant": HarnessKind.ASSISTANT,
    "user": HarnessKind.USER,
    "result": HarnessKind.RESULT,
}


def stream_events(
    doc: dict[str, Any], ctx: LineContext, state: ReadState, type_hint: str | None = None
) -> Iterator[LineEvent]:
    """The events of one stream-json line (``type_hint``: the envelope's ``event_type``, if any)."""
    line_type = text(doc.get("type")) or type_hint or ""
    common = {"session": text(doc.get("session_id")), "agent": text(doc.get("parent_tool_use_id"))}
    ctx = ctx.dated(doc.get("timestamp"))
    kind = KINDS.get(line_type, HarnessKind.OTHER)
    _follow_turn(state, ctx, kind, common)
    yield _line_event(doc, ctx, kind, line_type, common)
    yield from block_events(ctx, state, doc.get("message"), **common)
    if line_type == "result":
        yield from _denials(doc.get("permission_denials"), ctx, state, common)


def _line_event(
    doc: dict[str, Any], ctx: LineContext, kind: HarnessKind, line_type: str, common: dict[str, Any]
) -> LineEvent:
    """The line's own event; a ``result`` line's usage and error flag are authoritative, an assistant
    line's usage a partial snapshot (not counted)."""
    is_result = line_type == "result"
    return ctx.event(
        kind,
        subtype=text(doc.get("subtype")) or _unknown_type(kind, line_type),
        is_error=is_result and doc.get("is_error") is True,
        usage=usage(doc.get("usage")) if is_result else None,
        total_cost_usd=number(doc.get("total_cost_usd")),
        **common,
    )


def _unknown_type(kind: HarnessKind, line_type: str) -> str | None:
    """The ``type`` of a line of no known type, kept as its subtype."""
    return line_type if kind is HarnessKind.OTHER and line_type else None


def _follow_turn(state: ReadState, ctx: LineContext, kind: HarnessKind, common: dict[str, Any]) -> None:
    """A main agent's line opens its turn in the file and session until a ``result`` line ends it (a turn
    left open is a cut run)."""
    turn = (ctx.span.file, common["session"])
    if kind is HarnessKind.RESULT:
        state.open_turns.pop(turn, None)
    elif kind is HarnessKind.ASSISTANT and common["agent"] is None:
        state.open_turns.setdefault(turn, ctx.span)


def _denials(denials: Any, ctx: LineContext, state: ReadState, common: dict[str, Any]) -> Iterator[LineEvent]:
    """A ``result`` line's permission denials, each a failed result of the call it refused."""
    for denial in array(denials):
        if isinstance(denial, dict):
            yield _denial(denial, ctx, state, common)


def _denial(denial: dict[str, Any], ctx: LineContext, state: ReadState, common: dict[str, Any]) -> LineEvent:
    call_id = text(denial.get("tool_use_id"))
    return ctx.event(
        HarnessKind.TOOL_RESULT,
        subtype="permission_denial",
        tool=text(denial.get("tool_name")) or state.name_of(call_id),
        tool_use_id=call_id,
        tool_input=as_object(denial.get("tool_input")),
        is_error=True,
        **common,
    )

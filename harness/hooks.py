"""Claude Code hook payloads (what a hook command receives on stdin), one object per payload.

Every payload has ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` and, in later
releases, ``permission_mode``; the rest depends on the event:

- ``PreToolUse`` (``tool_name``, ``tool_input``, ``tool_use_id``)       -> a tool call
- ``PostToolUse`` (adds ``tool_response``; fires only when the tool succeeded) -> a tool result, not an
  error, whose ``result_text`` is the response's text (a Bash call's stdout and stderr)
- ``PostToolUseFailure`` (adds ``error``, ``is_interrupt``)            -> a tool result that is an error,
  whose ``result_text`` is the ``error``
- ``OuroborosGate`` with ``decision: deny`` (the line ``ouro hook`` writes after a call its gate refused,
  with the ``gates`` that fired and the ``reason`` the agent was shown) -> a tool result that is an error,
  subtype ``gate_denial``: the refused call's struggle (``tools.denied_by`` names the gates)
- ``Stop``/``SubagentStop`` (``stop_hook_active``), ``SessionStart`` (``source``, ``model``),
  ``SessionEnd``, ``UserPromptSubmit``, ``Notification``, ``PreCompact``… -> a ``hook`` event

Payloads change with every release (``tool_use_id``, ``permission_mode``, ``duration_ms``, ``effort``,
``agent_transcript_path`` appeared over time), so nothing is required beyond ``hook_event_name`` and
every field is kept in ``raw``. Older payloads have no ``tool_use_id``: ``harness.tools`` then pairs a
call with its result by session, tool name and input.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ouroboros_gates.harness.context import LineContext, ReadState, result_text, text
from ouroboros_gates.harness.line import LineEvent
from ouroboros_gates.schemas.kinds import HarnessKind

if TYPE_CHECKING:
    from ouroboros_gates.schemas import HarnessEvent

__all__ = ["GATE_DENIAL", "GATE_EVENT", "hook_events", "is_turn_end", "payload_of"]

GATE_EVENT = "OuroborosGate"
"""The ``hook_event_name`` of the line ``ouro hook`` writes when a gate refuses a call."""
GATE_DENIAL = "gate_denial"
"""The subtype of the tool result that line becomes."""

_TOOL_KINDS = {
    "PreToolUse": HarnessKind.TOOL_CALL,
    "PostToolUse": HarnessKind.TOOL_RESULT,
    "PostToolUseFailure": HarnessKind.TOOL_RESULT,
}


def hook_events(doc: dict[str, Any], ctx: LineContext, state: ReadState) -> Iterator[LineEvent]:
    """The one event of a hook payload."""
    name = str(doc["hook_event_name"])
    denied = _is_gate_denial(name, doc)
    kind = _kind_of(name, denied)
    call_id, tool = text(doc.get("tool_use_id")), text(doc.get("tool_name"))
    if kind is HarnessKind.TOOL_CALL:
        state.called(call_id, tool)
    ctx = ctx.dated(doc.get("timestamp"))
    yield ctx.event(
        kind,
        subtype=GATE_DENIAL if denied else name,
        session=text(doc.get("session_id")),
        agent=text(doc.get("agent_id")),
        tool=tool or _answered(state, call_id, kind),
        tool_use_id=call_id,
        tool_input=_tool_input(doc, kind),
        is_error=name == "PostToolUseFailure" or denied,
        result_text=_result_of(doc, kind),
    )


def _kind_of(name: str, denied: bool) -> HarnessKind:
    """A gate's denial is a failed result; a tool hook describes a call or a result; any other is a hook."""
    return HarnessKind.TOOL_RESULT if denied else _TOOL_KINDS.get(name, HarnessKind.HOOK)


def _is_gate_denial(name: str, doc: dict[str, Any]) -> bool:
    """Whether the payload is the line ``ouro hook`` writes when a gate refuses a call."""
    return name == GATE_EVENT and doc.get("decision") == "deny"


def _answered(state: ReadState, call_id: str | None, kind: HarnessKind) -> str | None:
    """The tool of the call a result answers, when the payload does not name it."""
    return state.name_of(call_id) if kind is HarnessKind.TOOL_RESULT else None


def _result_of(doc: dict[str, Any], kind: HarnessKind) -> str | None:
    """What a result payload says (none for a payload that is no result)."""
    return _response_text(doc) if kind is HarnessKind.TOOL_RESULT else None


def _tool_input(doc: dict[str, Any], kind: HarnessKind) -> dict[str, Any] | None:
    """The input of the call a payload describes (none for a hook that describes no call)."""
    tool_input = doc.get("tool_input")
    return tool_input if isinstance(tool_input, dict) and kind is not HarnessKind.HOOK else None


def _response_text(doc: dict[str, Any]) -> str | None:
    """A failure's ``error``; a success's ``tool_response``: a string, a Bash call's stdout and stderr
    (each when not empty), or the ``content`` a tool returned."""
    return _refusal(doc) or _tool_response_text(doc.get("tool_response"))


def _refusal(doc: dict[str, Any]) -> str | None:
    """A failure's ``error``, else a gate's ``reason`` (None when neither says anything)."""
    for key in ("error", "reason"):
        if (said := text(doc.get(key))) is not None:
            return said
    return None


def _tool_response_text(response: Any) -> str | None:
    """A success's ``tool_response``: a string, a Bash call's output streams, or the ``content`` a tool
    returned."""
    if not isinstance(response, dict):
        return result_text(response)
    streams = _streams(response)
    return "\n".join(streams) if streams else result_text(response.get("content"))


def _streams(response: dict[str, Any]) -> list[str]:
    """A Bash call's ``stdout`` and ``stderr``, each when not empty."""
    return [response[name] for name in ("stdout", "stderr") if text(response.get(name)) is not None]


def is_turn_end(event: HarnessEvent | LineEvent) -> bool:
    """A ``Stop`` hook that ends a turn; with ``stop_hook_active`` it is the same turn stopping again."""
    if event.kind is not HarnessKind.HOOK or event.subtype != "Stop":
        return False
    return payload_of(event.raw).get("stop_hook_active") is not True


def payload_of(raw: dict[str, Any]) -> dict[str, Any]:
    """The hook payload of a line: the line itself, or the ``event`` of a CSF envelope."""
    inner = raw.get("event")
    return inner if isinstance(inner, dict) and "event_type" in raw else raw

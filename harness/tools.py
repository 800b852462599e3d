"""Tool calls, their results, and the one definition of a tool error: a struggle.

**A tool error** (a *struggle*, in the measurer's series and on the ops page) is a tool call whose result
reports failure or that a gate refused, in any format:

- a ``tool_result`` block with ``"is_error": true`` (stream-json, transcripts; Claude Code writes a
  user's or a permission rule's refusal this way too, e.g. "The user doesn't want to proceed…", and a
  hook's denial, whose text is the hook's reason),
- a ``PostToolUseFailure`` hook (``PostToolUse`` fires only on success),
- a permission denial (a stream-json ``result``'s ``permission_denials``),
- an Ouroboros gate's denial: the ``OuroborosGate`` line ``ouro hook`` writes after the refused call; it
  is attributed to the gates that fired (``denied_by``), as is a transcript's error whose text is that
  refusal,
- a failed step of another agent (a SWE-agent observation, an OpenHands error observation: their readers).

Readers mark these events ``kind == tool_result`` with ``is_error``; ``is_tool_error`` is the test
everything uses. A failed call can be reported more than once (a denial is both an ``is_error`` result
and a ``permission_denials`` entry; a log may repeat a line), so errors are counted once per call
(``call_key``: session and ``tool_use_id``), and once per event only when no id exists. Tool calls are
counted the same way.

Pairing joins calls and results by ``tool_use_id``; hook payloads written before ``tool_use_id`` existed
are joined by session, tool name and input, first call first. Pairing need not be one-to-one: a call may
have no result (interrupted, or the log was cut) or several, and a result may have no call.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from ouroboros_gates.harness.context import array
from ouroboros_gates.harness.hooks import GATE_DENIAL, payload_of
from ouroboros_gates.harness.line import LineEvent
from ouroboros_gates.schemas.kinds import HarnessKind

if TYPE_CHECKING:
    from ouroboros_gates.schemas import HarnessEvent

__all__ = [
    "TOOL_ERROR_DEFINITION",
    "ToolUse",
    "by_input",
    "call_key",
    "denied_by",
    "is_tool_error",
    "pair_tool_uses",
]

TOOL_ERROR_DEFINITION = (
    "a struggle: a tool call whose result is an error or that a gate denied: "
    "a tool_result with is_error true, a PostToolUseFailure hook, "
    "a permission denial (stream-json permission_denials), "
    "an Ouroboros gate's denial (attributed to the gate that fired), "
    "a failed step of another agent; counted once per tool_use_id"
)
_REFUSAL = re.compile(r"Ouroboros gate (\S+) \(deny, [^)]*\) refuses this call")
"""How the hook's deny reason names each gate (``ops.gate.evaluate.render``), as a transcript quotes it."""


def is_tool_error(event: HarnessEvent | LineEvent) -> bool:
    """Whether ``event`` reports a failed tool call (see the module docstring: the only definition)."""
    return event.kind is HarnessKind.TOOL_RESULT and event.is_error


def denied_by(event: HarnessEvent | LineEvent) -> tuple[str, ...]:
    """The gates that refused the call ``event`` reports (none when no gate did): an ``OuroborosGate``
    line's ``gates``, or the gates its error text quotes from the hook's reason."""
    if not is_tool_error(event):
        return ()
    listed = _listed_gates(event)
    return _unique(listed) if listed else _unique(_REFUSAL.findall(event.result_text or ""))


def _listed_gates(event: HarnessEvent | LineEvent) -> list[Any]:
    """The ``gates`` an ``OuroborosGate`` line lists (in a CSF envelope or not); none for another line."""
    if event.subtype != GATE_DENIAL:
        return []
    return array(payload_of(event.raw).get("gates"))


def _unique(gates: Iterable[Any]) -> tuple[str, ...]:
    """The gates' names, each once, in order."""
    return tuple(dict.fromkeys(str(gate) for gate in gates))


def call_key(event: HarnessEvent | LineEvent) -> tuple[str | None, str] | None:
    """The tool call an event belongs to, ``(session, tool_use_id)``; None without an id (then the event
    counts on its own)."""
    return (event.session, event.tool_use_id) if event.tool_use_id else None


@dataclass
class ToolUse:
    """A tool call with the results that answer it (either side may be missing)."""

    call: HarnessEvent | None
    results: list[HarnessEvent] = field(default_factory=list)

    @property
    def tool(self) -> str | None:
        """The tool's name, from the call or else from a result."""
        return next((event.tool for event in self._sides() if event.tool), None)

    def _sides(self) -> list[HarnessEvent]:
        """The call, when there is one, then the results."""
        return ([self.call] if self.call else []) + self.results

    @property
    def is_error(self) -> bool:
        """Whether any result is a tool error."""
        return any(is_tool_error(result) for result in self.results)


def pair_tool_uses(events: Iterable[HarnessEvent]) -> list[ToolUse]:
    """Join calls and results, in the order each pair (or lone call or result) first appears.

    Order does not matter: a result read before its call (hook payloads kept in separate files) is
    joined when the call arrives.
    """
    pairing = _Pairing()
    for event in events:
        if event.kind is HarnessKind.TOOL_CALL:
            pairing.use_of(event, is_call=True).call = event
        elif event.kind is HarnessKind.TOOL_RESULT:
            pairing.use_of(event, is_call=False).results.append(event)
    return pairing.uses


@dataclass
class _Pairing:
    """The uses found so far, by call id, and those waiting for the other side by session, tool and input."""

    uses: list[ToolUse] = field(default_factory=list)
    by_id: dict[tuple[str | None, str], ToolUse] = field(default_factory=dict)
    waiting: dict[bool, defaultdict[Hashable, deque[ToolUse]]] = field(
        default_factory=lambda: {True: defaultdict(deque), False: defaultdict(deque)}
    )
    """Per side (True: calls), the uses that have only that side yet."""

    def use_of(self, event: HarnessEvent, is_call: bool) -> ToolUse:
        """The use the call or result ``event`` belongs to (a new one when none is waiting for it)."""
        key = call_key(event)
        if key is None:
            return self._by_input(by_input(event), is_call)
        use = self.by_id.get(key)
        if use is None or (is_call and use.call is not None):
            use = self._new()
            self.by_id.setdefault(key, use)
        return use

    def _by_input(self, similar: Hashable, is_call: bool) -> ToolUse:
        # Without ids a result answers the oldest unanswered call with the same session, tool and input.
        theirs = self.waiting[not is_call][similar]
        if theirs:
            return theirs.popleft()
        use = self._new()
        self.waiting[is_call][similar].append(use)
        return use

    def _new(self) -> ToolUse:
        use = ToolUse(call=None)
        self.uses.append(use)
        return use


def by_input(event: HarnessEvent | LineEvent) -> Hashable:
    """What pairs a call and its result when they carry no id: their session, tool and input."""
    blob = orjson.dumps(event.tool_input, option=orjson.OPT_SORT_KEYS) if event.tool_input else b""
    return (event.session, event.tool, blob)

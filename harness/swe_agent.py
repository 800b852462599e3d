"""SWE-agent trajectories (``.traj``): one JSON document per run, read into tool calls, results and usage.

A trajectory holds ``trajectory`` (one step per action: ``action``, the text that ran; ``observation``, what
came back; ``thought``, ``response``, ``state``, ``execution_time``), ``history`` (the model's messages; in
function-calling mode an assistant message carries ``tool_calls`` with an ``id`` and a ``function``, and a
``tool`` message answers with ``tool_call_ids``) and ``info`` (``model_stats``: ``instance_cost``,
``tokens_sent``, ``tokens_received``, ``api_calls``; ``exit_status``). Some files hold the history alone.

- Each step is a tool call and its result, named ``step-N`` (the history's tool calls, in order, give
  their function names; a replayed trajectory may repeat their ids). A file of history alone has the
  history's calls, each answered by the ``tool`` message that names its id. Every action runs in
  SWE-agent's shell, so a step without a function name is a ``Bash`` call whose ``command`` is the
  action; a named function keeps its name (``bash`` is ``Bash``) and its arguments.
- A step is a tool error when its observation reports failure (``FAILED``: a Python traceback, SWE-agent's
  linter refusing an edit, a shell's "command not found" / "No such file or directory", a command's
  ``Usage:``/``Error:`` line, a timeout). SWE-agent writes no exit status per step: this is the one reading
  of its text, and a test holds it to an independent count.
- ``info.model_stats`` is one ``result`` event: ``tokens_sent`` as input tokens, ``tokens_received`` as
  output, ``instance_cost`` as the run's cost. SWE-agent reports no cache counts, so the run's prompt-cache
  ratio is unknown (``CACHE_UNREPORTED``), never 0.

A trajectory has no timestamps. Each step's span is the line its object starts on
(``elements.element_lines``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from ouroboros_gates.harness.context import (
    LineContext,
    ReadState,
    array,
    field_at,
    first_item,
    number,
    text,
)
from ouroboros_gates.harness.elements import element_lines
from ouroboros_gates.harness.line import LineEvent, Tokens, Where
from ouroboros_gates.schemas.kinds import HarnessKind

__all__ = ["CACHE_UNREPORTED", "FAILED", "is_trajectory", "swe_agent_events"]

CACHE_UNREPORTED = "usage_without_cache_counts"
"""The subtype of a ``result`` whose usage says nothing of the prompt cache (its run has no h_r)."""

FAILED = re.compile(
    r"^(?:Traceback \(most recent call last\)"
    r"|Your proposed edit has introduced new syntax error"
    r"|(?:/bin/)?(?:ba)?sh: .*(?:command not found|No such file or directory|syntax error)"
    r"|.*: command not found$"
    r"|Usage: |Error: |ERROR: "
    r"|EXECUTION TIMED OUT|The command .* was cancelled because it took more than)",
    re.MULTILINE,
)
"""A line of an observation that reports the step failed."""


def is_trajectory(doc: dict[str, Any]) -> bool:
    """Whether ``doc`` is a SWE-agent trajectory: steps, or a history of role messages."""
    if isinstance(doc.get("trajectory"), list):
        return True
    return _is_role_history(doc.get("history"))


def _is_role_history(history: Any) -> bool:
    """Whether ``history`` is a non-empty list of messages (its first has a ``role``)."""
    first = first_item(history)
    return isinstance(first, dict) and "role" in first


class _Step(NamedTuple):
    """One step: the call it made (its id, tool and input), what came back, and its place in the run."""

    call_id: str
    tool: str
    tool_input: dict[str, Any]
    observation: str
    place: int

    def line_in(self, lines: list[int], default: int) -> int:
        """The line the step's object starts on, among the trajectory's ``lines`` (else ``default``)."""
        return lines[self.place] if self.place < len(lines) else default

    def events(self, ctx: LineContext, state: ReadState) -> Iterator[LineEvent]:
        """The step's call and its result, on the step's line (``ctx``)."""
        state.called(self.call_id, self.tool)
        yield ctx.event(
            HarnessKind.TOOL_CALL,
            tool=self.tool,
            tool_use_id=self.call_id,
            tool_input=self.tool_input,
            session=ctx.run,
        )
        yield ctx.event(
            HarnessKind.TOOL_RESULT,
            tool=self.tool,
            tool_use_id=self.call_id,
            session=ctx.run,
            is_error=FAILED.search(self.observation) is not None,
            result_text=self.observation or None,
        )


def _calls(history: Any) -> list[tuple[str | None, str | None, Any]]:
    """``(id, function name, arguments)`` of every tool call the history's assistant messages made, in
    order; an entry of ``tool_calls`` that is not an object names no call."""
    return [
        _call(call)
        for message in array(history)
        for call in array(field_at(message, "tool_calls"))
        if isinstance(call, dict)
    ]


def _call(call: dict[str, Any]) -> tuple[str | None, str | None, Any]:
    """``(id, function name, arguments)`` of one tool call."""
    function = field_at(call, "function")
    function = function if isinstance(function, dict) else {}
    return text(call.get("id")), text(function.get("name")), function.get("arguments")


def _results(history: Any) -> dict[str, str]:
    """The observation text each tool call id got, from the history's ``tool`` messages."""
    found: dict[str, str] = {}
    for message in array(history):
        for call_id in array(field_at(message, "tool_call_ids")):
            found[str(call_id)] = _content_text(message.get("content"))
    return found


def _content_text(content: Any) -> str:
    """A ``tool`` message's content as text (written as JSON when it is not a string)."""
    return content if isinstance(content, str) else json.dumps(content)


def _tool(name: str | None, arguments: Any, action: str) -> tuple[str, dict[str, Any]]:
    if name in (None, "bash"):
        return _bash(name, arguments, action)
    return name, arguments_of(arguments) or {"command": action}


def _bash(name: str | None, arguments: Any, action: str) -> tuple[str, dict[str, Any]]:
    """A ``Bash`` call: a ``bash`` function's command, else the step's action."""
    command = arguments_of(arguments).get("command") if name == "bash" else None
    return "Bash", {"command": command if isinstance(command, str) else action}


def arguments_of(arguments: Any) -> dict[str, Any]:
    """A function call's arguments as an object (they are written as a JSON string)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return {}
    return arguments if isinstance(arguments, dict) else {}


def _has_steps(doc: dict[str, Any]) -> bool:
    """Whether the trajectory lists its steps (else its history's calls are read)."""
    steps = doc.get("trajectory")
    return isinstance(steps, list) and bool(steps)


def _steps(doc: dict[str, Any]) -> list[_Step]:
    """The trajectory's steps, else the history's calls."""
    history = doc.get("history")
    calls = _calls(history)
    if _has_steps(doc):
        return _trajectory_steps(doc["trajectory"], calls)
    return _history_steps(calls, _results(history))


def _history_steps(calls: list[tuple[str | None, str | None, Any]], answers: dict[str, str]) -> list[_Step]:
    """The history's calls, each answered by the ``tool`` message that names its id."""
    return [
        _Step(
            call_id or f"call-{index + 1}", *_tool(name, arguments, ""), answers.get(call_id or "", ""), index
        )
        for index, (call_id, name, arguments) in enumerate(calls)
    ]


def _trajectory_steps(steps: list[Any], calls: list[tuple[str | None, str | None, Any]]) -> list[_Step]:
    """The trajectory's steps, named by the history's calls when there is one per step."""
    named = calls if len(calls) == len(steps) else [(None, None, None)] * len(steps)
    return [
        _trajectory_step(entry, name, arguments, index)
        for index, (entry, (_id, name, arguments)) in enumerate(zip(steps, named, strict=True))
    ]


def _trajectory_step(entry: Any, name: str | None, arguments: Any, index: int) -> _Step:
    """One step of the trajectory, its call named by the history's when known."""
    step: dict[str, Any] = entry if isinstance(entry, dict) else {}
    action = text(step.get("action")) or ""
    tool, tool_input = _tool(name, arguments, action.strip())
    observation = text(step.get("observation")) or ""
    # A replayed or hand-written trajectory may repeat a call id: a step is named by its place.
    return _Step(f"step-{index + 1}", tool, tool_input, observation, index)


def swe_agent_events(doc: dict[str, Any], ctx: LineContext, state: ReadState) -> Iterator[LineEvent]:
    """The events of one trajectory: a call and a result per step, then its ``model_stats`` as a result."""
    steps = _steps(doc)
    key = "trajectory" if _has_steps(doc) else "history"
    lines = element_lines(ctx.span.file, ctx.span.line, key) if steps else []
    for step in steps:
        line = step.line_in(lines, ctx.span.line) if key == "trajectory" else ctx.span.line
        yield from step.events(LineContext(ctx.run, Where(ctx.span.file, line), ctx.raw), state)
    yield from _model_stats(doc.get("info"), ctx, ctx.run)


def _model_stats(info: Any, ctx: LineContext, session: str) -> Iterator[LineEvent]:
    stats = field_at(info, "model_stats")
    if not isinstance(stats, dict):
        return
    cost = number(stats.get("instance_cost"))
    yield ctx.event(
        HarnessKind.RESULT,
        subtype=CACHE_UNREPORTED,
        usage=_usage(stats),
        total_cost_usd=cost,
        session=session,
    )


def _usage(stats: dict[str, Any]) -> Tokens:
    """The tokens ``model_stats`` counts: sent as input, received as output (no cache counts)."""
    sent, received = number(stats.get("tokens_sent")), number(stats.get("tokens_received"))
    return Tokens(input_tokens=int(sent or 0), output_tokens=int(received or 0))

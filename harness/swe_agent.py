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

A trajectory has no timestamps. Each step's span is the line its object starts on (``source.element_lines``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ouroboros_gates.harness.context import LineContext, ReadState, number, text
from ouroboros_gates.harness.line import LineEvent, Tokens, Where
from ouroboros_gates.harness.source import element_lines
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
    history = doc.get("history")
    return (
        isinstance(history, list) and bool(history) and isinstance(history[0], dict) and "role" in history[0]
    )


def _calls(history: Any) -> list[tuple[str | None, str | None, Any]]:
    """``(id, function name, arguments)`` of every tool call the history's assistant messages made, in
    order."""
    found = []
    for message in history if isinstance(history, list) else []:
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else []:
            function = call.get("function") if isinstance(call, dict) else None
            function = function if isinstance(function, dict) else {}
            found.append((text(call.get("id")), text(function.get("name")), function.get("arguments")))
    return found


def _results(history: Any) -> dict[str, str]:
    """The observation text each tool call id got, from the history's ``tool`` messages."""
    found: dict[str, str] = {}
    for message in history if isinstance(history, list) else []:
        ids = message.get("tool_call_ids") if isinstance(message, dict) else None
        for call_id in ids if isinstance(ids, list) else []:
            content = message.get("content")
            found[str(call_id)] = content if isinstance(content, str) else json.dumps(content)
    return found


def _tool(name: str | None, arguments: Any, action: str) -> tuple[str, dict[str, Any]]:
    if name is None or name == "bash":
        command = arguments_of(arguments).get("command") if name == "bash" else None
        return "Bash", {"command": command if isinstance(command, str) else action}
    return name, arguments_of(arguments) or {"command": action}


def arguments_of(arguments: Any) -> dict[str, Any]:
    """A function call's arguments as an object (they are written as a JSON string)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return {}
    return arguments if isinstance(arguments, dict) else {}


def _steps(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], str, int]]:
    """``(call id, tool, input, observation, index)`` per step: the trajectory's, else the history's calls."""
    history = doc.get("history")
    calls = _calls(history)
    steps = doc.get("trajectory")
    if isinstance(steps, list) and steps:
        return _trajectory_steps(steps, calls)
    answers = _results(history)
    return [
        (call_id or f"call-{index + 1}", *_tool(name, arguments, ""), answers.get(call_id or "", ""), index)
        for index, (call_id, name, arguments) in enumerate(calls)
    ]


def _trajectory_steps(
    steps: list[Any], calls: list[tuple[str | None, str | None, Any]]
) -> list[tuple[str, str, dict[str, Any], str, int]]:
    """The trajectory's steps, named by the history's calls when there is one per step."""
    named = calls if len(calls) == len(steps) else [(None, None, None)] * len(steps)
    found = []
    for index, (entry, (_id, name, arguments)) in enumerate(zip(steps, named, strict=True)):
        step: dict[str, Any] = entry if isinstance(entry, dict) else {}
        action = text(step.get("action")) or ""
        tool, tool_input = _tool(name, arguments, action.strip())
        observation = text(step.get("observation")) or ""
        # A replayed or hand-written trajectory may repeat a call id: a step is named by its place.
        found.append((f"step-{index + 1}", tool, tool_input, observation, index))
    return found


def swe_agent_events(doc: dict[str, Any], ctx: LineContext, state: ReadState) -> Iterator[LineEvent]:
    """The events of one trajectory: a call and a result per step, then its ``model_stats`` as a result."""
    steps = _steps(doc)
    key = "trajectory" if isinstance(doc.get("trajectory"), list) and doc["trajectory"] else "history"
    lines = element_lines(ctx.span.file, ctx.span.line, key) if steps else []
    session = ctx.run
    for call_id, tool, tool_input, observation, index in steps:
        line = lines[index] if key == "trajectory" and index < len(lines) else ctx.span.line
        step = LineContext(ctx.run, Where(ctx.span.file, line), ctx.raw)
        state.called(call_id, tool)
        yield step.event(
            HarnessKind.TOOL_CALL, tool=tool, tool_use_id=call_id, tool_input=tool_input, session=session
        )
        yield step.event(
            HarnessKind.TOOL_RESULT,
            tool=tool,
            tool_use_id=call_id,
            session=session,
            is_error=FAILED.search(observation) is not None,
            result_text=observation or None,
        )
    yield from _model_stats(doc.get("info"), ctx, session)


def _model_stats(info: Any, ctx: LineContext, session: str) -> Iterator[LineEvent]:
    stats = info.get("model_stats") if isinstance(info, dict) else None
    if not isinstance(stats, dict):
        return
    sent, received = number(stats.get("tokens_sent")), number(stats.get("tokens_received"))
    usage = Tokens(input_tokens=int(sent or 0), output_tokens=int(received or 0))
    cost = number(stats.get("instance_cost"))
    yield ctx.event(
        HarnessKind.RESULT, subtype=CACHE_UNREPORTED, usage=usage, total_cost_usd=cost, session=session
    )

"""``ouro hook`` / ``python -m ops.hook``: the command Claude Code runs for every hook event.

    <venv>/bin/python -S -P <ops>/hook_script.py [--state DIR] [--timeout S]   as installed; payload on stdin
    <venv>/bin/python -P -m ops.hook [--state DIR] [--timeout S]               the same
    <venv>/bin/python -P -m ops.hook --flush [--state DIR]                     hand the spooled runs to the
    fleet

For every payload it (1) appends it to ``<state>/runs/<session>/events.jsonl`` in the CSF envelope
(``{"ts", "event_type": "hook", "event": <payload>}``, every field kept but secrets, which are replaced by
``<secret>`` first (``ops.gate.scrub``), and ``UserPromptSubmit``'s prompt, kept only with
``OURO_RECORD_PROMPTS=1``), (2) spools the run for the
fleet (``ops.gate.spool``: a later flush publishes the ``IngestRun``; the hook itself never talks to
the broker), and (3) on ``PreToolUse`` asks the gate server (``ops.gate.server``) whether an accepted
miner fires on the run so far plus this pending call (a state without compiled gates starts a server
that compiles them first, within this call's budget when it can): a ``deny`` gate prints Claude Code's deny
answer, whose reason cites the finding's proof; a ``warn`` gate only adds ``additionalContext`` (by
default on the session's next call: warn gates are evaluated after the answer, off the hot path);
otherwise it prints nothing (``OURO_HOOK_TRACE=1`` adds one stderr line with the server's decision
time). ``Stop`` and ``SessionEnd`` start a flush in the background
(``OURO_HOOK_AUTOFLUSH=0`` turns that off); ``SessionStart`` starts the gate server early.

It never blocks or fails the agent: it always exits 0. Unreadable stdin, any internal error, or no
answer in time allows the call with one warning line on stderr; a hard timer (``--timeout``,
``OURO_HOOK_TIMEOUT_S``, 5 s) ends the process and allows. With ``OURO_GATE_FAIL=closed`` (asked for by
the operator; ``open`` is the default) a ``PreToolUse`` call that gates bind but that no gate server
judged in time, or that a deny gate could not judge, is denied instead, saying why. Every setting is
checked (``ops.gate.settings``): a value it cannot use is replaced by its default, with one warning line.
This module imports only the standard library and ``ops.gate``'s stdlib-only modules: no Celery,
SQLAlchemy, pydantic or miners here.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook never imports typing at run time
    from types import FrameType
    from typing import Any

    from ouroboros_gates.ops.gate.settings import HookSettings

__all__ = ["main", "run"]

MARGIN_S = 0.3
"""The answer is waited for until this long before the hard timer, so a late one still allows cleanly."""


class _Closed:
    """What the hard timer prints when it ends a decision that fails closed (None: nothing, which allows)."""

    output: dict[str, Any] | None = None


def _warn(message: str) -> None:
    text = " ".join(str(message).split())[:500]
    try:
        sys.stderr.write(f"ouro hook: {text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _expire(signum: int, frame: FrameType | None) -> None:
    if _Closed.output is None:
        _warn("no decision within the hook's timeout; the call is allowed")
    else:
        _warn("no decision within the hook's timeout; OURO_GATE_FAIL=closed denies the call")
        _print(_Closed.output)
    os._exit(0)


def _arg(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv and argv.index(name) + 1 < len(argv) else None


def main(argv: list[str] | None = None) -> int:
    """Run the hook (or ``--flush``); always 0 for a hook call."""
    args = sys.argv[1:] if argv is None else argv
    if "--flush" in args:
        return _flush(_arg(args, "--state"))
    started = time.monotonic()
    from ouroboros_gates.ops.gate.settings import hook_settings

    settings, warnings = hook_settings(os.environ, _arg(args, "--timeout"))
    for warning in warnings:
        _warn(warning)
    signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, settings.timeout_s)
    output = None
    try:
        output = run(
            sys.stdin.buffer.read(), _arg(args, "--state"), started + settings.timeout_s - MARGIN_S, settings
        )
    except (
        Exception
    ) as exc:  # the agent must never see the hook fail: allow (or deny, closed), and say why once
        output = _failed(exc)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)  # a decision is never cut half-printed
    if output is not None:
        _print(output)
    return 0


def _failed(exc: Exception) -> dict[str, Any] | None:
    """What the hook prints when it failed: what the hard timer would (allow, or deny when failing closed),
    said once on stderr."""
    output = _Closed.output
    _warn(
        f"internal error, the call is {'allowed' if output is None else 'denied'}: "
        f"{type(exc).__name__}: {exc}"
    )
    return output


def _print(output: dict[str, Any]) -> None:
    try:
        sys.stdout.write(json.dumps(output) + "\n")
        sys.stdout.flush()
    except (OSError, ValueError) as exc:
        _warn(f"could not print the decision ({exc}); the call is allowed")


def _payload(data: bytes) -> dict[str, Any] | None:
    try:
        payload = json.loads(data)
    except ValueError as exc:  # UnicodeDecodeError is one too
        _warn(f"stdin is not a JSON hook payload ({exc}); the call is allowed")
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("hook_event_name"), str):
        _warn("stdin is not a hook payload (a JSON object with hook_event_name); the call is allowed")
        return None
    return payload


def run(
    data: bytes, state_arg: str | None, deadline: float, settings: HookSettings | None = None
) -> dict[str, Any] | None:
    """Record one payload, spool its run, and on PreToolUse return Claude Code's answer (None: allow).
    ``settings``: the hook's, read from the environment when not given."""
    from ouroboros_gates.ops.gate.paths import run_file, session_name, spool_path, state_dir
    from ouroboros_gates.ops.gate.record import append_line, envelope, spool_entry
    from ouroboros_gates.ops.gate.scrub import scrub_payload

    if settings is None:
        from ouroboros_gates.ops.gate.settings import hook_settings

        settings = hook_settings(os.environ)[0]
    payload = _payload(data)
    if payload is None:
        return None
    if settings.fail_closed and payload["hook_event_name"] == "PreToolUse":  # until a gate judges it
        _Closed.output = _unjudged_output("the hook failed before its gates could judge the call")
    state = state_dir(state_arg)
    session = session_name(payload.get("session_id"))
    event = payload["hook_event_name"]
    log = run_file(state, session)
    start, end = append_line(log, envelope(scrub_payload(payload, _record_prompts())))
    append_line(spool_path(state), spool_entry(session, log, event))
    if event == "PreToolUse":
        return _decide(state, log, session, payload, (start, end), deadline, settings)
    _start_work(event, state, deadline, settings)
    return None


def _start_work(event: str, state: str, deadline: float, settings: HookSettings) -> None:
    """What a session's start or end starts in the background: the gate server, or a flush of the spool."""
    if event == "SessionStart" and time.monotonic() < deadline:  # a hook out of time starts nothing
        _warm(state)
    elif event in ("Stop", "SessionEnd") and settings.autoflush:
        from ouroboros_gates.ops.gate.client import background, module_argv

        background(module_argv("ouroboros_gates.ops.hook", "--flush", "--state", state), state)


def _record_prompts() -> bool:
    """``OURO_RECORD_PROMPTS`` as the settings read a boolean (``1``, ``true``, ``yes``, ``on``)."""
    return os.environ.get("OURO_RECORD_PROMPTS", "").strip().lower() in ("1", "true", "t", "yes", "y", "on")


def _decide(
    state: str,
    log: str,
    session: str,
    payload: dict[str, Any],
    span: tuple[int, int],
    deadline: float,
    settings: HookSettings,
) -> dict[str, Any] | None:
    from ouroboros_gates.ops.gate.client import GateUnavailable, gate_count

    if gate_count(state) == 0:  # compiled, and nothing binds: no server to ask
        _Closed.output = None
        return None
    if settings.fail_closed:  # until an answer comes, what the hard timer prints
        _Closed.output = _unjudged_output("no gate server answered within the hook's timeout", state)
    try:
        answer = _ask(state, log, session, span, deadline)
    except GateUnavailable as exc:
        return _undecided(str(exc), state, settings)
    finally:
        _Closed.output = None  # from here the call's answer is decided below
    return _answered(answer, log, payload, state, settings)


def _ask(state: str, log: str, session: str, span: tuple[int, int], deadline: float) -> dict[str, Any]:
    """The gate server's answer on the run's lines ``span`` (``GateUnavailable`` when none answers in
    time)."""
    from ouroboros_gates.ops.gate.client import ask

    tenant = os.environ.get("OURO_TENANT") or "default"
    request = {
        "op": "decide",
        "file": log,
        "run": session,
        "start": span[0],
        "end": span[1],
        "tenant": tenant,
    }
    return ask(state, request, deadline, start=time.monotonic() < deadline)


def _answered(
    answer: dict[str, Any], log: str, payload: dict[str, Any], state: str, settings: HookSettings
) -> dict[str, Any] | None:
    """What the hook prints for the server's answer: a deny (recorded in the run), a warning's context,
    nothing, or (failing closed) a deny for a call a deny gate could not judge."""
    if answer.get("error"):
        return _undecided(f"the gate server could not decide ({answer['error']})", state, settings)
    _warn_answer(answer, settings)
    output = answer.get("output")
    if answer.get("decision") == "deny" and isinstance(output, dict):
        _record_denial(log, payload, answer)
        return output
    unjudged = _unjudged(answer)
    if settings.fail_closed and unjudged:
        return _undecided(
            f"deny gate(s) {', '.join(map(str, unjudged))} could not judge this call", state, settings
        )
    return output if isinstance(output, dict) else None


def _unjudged(answer: dict[str, Any]) -> list[Any]:
    """The deny gates the answer says could not judge the call (none when it names none)."""
    unjudged = answer.get("unjudged")
    return unjudged if isinstance(unjudged, list) else []


def _warn_answer(answer: dict[str, Any], settings: HookSettings) -> None:
    """One stderr line for the gates left out of the decision, and one for its trace when asked for."""
    problems = answer.get("problems")
    if isinstance(problems, dict) and problems:
        _warn("gate(s) left out of this decision: " + "; ".join(f"{k}: {v}" for k, v in problems.items()))
    if settings.trace:
        _warn(f"trace decision={answer.get('decision')} server_ms={answer.get('ms')}")


def _undecided(why: str, state: str, settings: HookSettings) -> dict[str, Any] | None:
    """No gate judged the call: allow with a warning, or deny saying why when the operator asked for it."""
    if not settings.fail_closed:
        _warn(f"{why}; the call is allowed")
        return None
    _warn(f"{why}; OURO_GATE_FAIL=closed denies the call")
    return _unjudged_output(why, state)


def _unjudged_output(why: str, state: str | None = None) -> dict[str, Any]:
    from ouroboros_gates.ops.gate.paths import log_path
    from ouroboros_gates.ops.gate.protocol import deny_output

    where = f"; the gate server's log is {log_path(state)}" if state else ""
    return deny_output(
        f"Ouroboros could not judge this call with its deny gates: {why}. This installation refuses what its "
        f"gates cannot judge (OURO_GATE_FAIL=closed){where}. Retry the call."
    )


def _record_denial(log: str, payload: dict[str, Any], answer: dict[str, Any]) -> None:
    """Put the refusal in the run, after the call it refused (an ``OuroborosGate`` hook line)."""
    from ouroboros_gates.ops.gate.record import append_line, envelope

    decision = {
        "hook_event_name": "OuroborosGate",
        "session_id": payload.get("session_id"),
        "tool_name": payload.get("tool_name"),
        "tool_use_id": payload.get("tool_use_id"),
        "decision": "deny",
        "gates": answer.get("fired"),
        "reason": answer.get("reason"),
    }
    append_line(log, envelope(decision, event_type="gate"))


def _warm(state: str) -> None:
    """A session starts: start the gate server now (it compiles the gates first when the state has none),
    so the first tool call does not wait for it."""
    from ouroboros_gates.ops.gate.client import gate_count, notify, start_server

    if gate_count(state) != 0 and not notify(state, {"op": "ping"}):
        start_server(state)


def _flush(state_arg: str | None) -> int:
    from pathlib import Path

    from ouroboros_gates.ops.gate.paths import state_dir
    from ouroboros_gates.ops.gate.spool import flush

    report = flush(Path(state_dir(state_arg)))
    if report.busy:
        print("another flush is running")
        return 0
    for run in report.published:
        print(f"queued {run}")
    if report.error:
        print(
            f"broker unreachable ({report.error}): {report.kept_lines} spooled line(s) kept", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

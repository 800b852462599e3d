"""What the hook tests share: a small deny miner built in a temporary ``OURO_MINERS_PATH`` (with its own
fixtures and labels, so it passes its own test and is accepted), and Claude Code's way of running a
command hook: the settings' command through a shell, the payload on stdin, stdout and the exit code read.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ouroboros_gates.miners import load_miner, miner_test, new_miner
from ouroboros_gates.ops.gate.cache import compile_gates
from ouroboros_gates.ops.gate.client import notify, server_pid, start_server
from ouroboros_gates.ops.hooks_install import hook_command, merge_settings

FORCE_PUSH_EXTRACT = '''\
"""FORCE-PUSH (a test miner): Bash calls that push to a remote, and calls that force."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ouroboros_gates.miners.corpus import CorpusItem
from ouroboros_gates.schemas import Fact, HarnessKind, Text

NAME = "force-push"
PACKAGE = "force_push"
VERDICTS = ("force_push",)
SCOPE = "generic"
CORPUS = ("jsonl",)
SEVERITY = "SEVERITY_S1"
GATE = "deny"

PUSH = re.compile(r"\\bgit\\s+push\\b")
FORCE = re.compile(r"(?:^|\\s)(?:--force(?:-with-lease)?|-f)(?:\\s|$)")


def extract(item: CorpusItem) -> Iterator[Fact]:
    """``pushes(R, C)`` and ``forced(R, C)`` for each Bash call C of run R, at the call's line."""
    run = Text(text=item.instance)
    for event in item.events():
        command = (event.tool_input or {}).get("command")
        if event.kind is not HarnessKind.TOOL_CALL or event.tool != "Bash" or not isinstance(command, str):
            continue
        call = Text(text=event.tool_use_id or f"line {event.span.line}")
        if PUSH.search(command):
            yield Fact(predicate="pushes", args=(run, call), span=event.span)
        if FORCE.search(command):
            yield Fact(predicate="forced", args=(run, call), span=event.span)
'''

FORCE_PUSH_RULES = """/* predicate
   force_push(R, C): the Bash call C of harness run R pushes to a remote with --force (or -f): it can
   overwrite commits other people pushed. pushes(R, C) and forced(R, C) come from extract.py. */

force_push(R, C) :- pushes(R, C), forced(R, C).
"""

# (instance, label, start, command): positives force-push; negatives push plainly or force something else.
FORCE_PUSH_RUNS = [
    ("fp-01", "+", "2026-10-01T08:00:00Z", "git push --force origin main"),
    ("fp-02", "-", "2026-10-01T09:00:00Z", "rm -f build.log"),
    ("fp-03", "-", "2026-10-01T10:00:00Z", "git push origin feature"),
    ("fp-04", "+", "2026-10-02T08:00:00Z", "git push -f origin HEAD"),
    ("fp-05", "-", "2026-10-02T09:00:00Z", "git push --dry-run origin main"),
    ("fp-06", "+", "2026-10-02T10:00:00Z", "git push --force-with-lease origin topic"),
    ("fp-07", "-", "2026-10-03T08:00:00Z", "git fetch --force origin"),
    ("fp-08", "+", "2026-10-03T09:00:00Z", "cd repo && git push --force"),
]


def hook_line(ts: str, payload: dict[str, Any]) -> str:
    """One CSF envelope line around a hook payload, as ``ouro hook`` writes it."""
    return json.dumps({"ts": ts, "event_type": "hook", "event": payload})


WEDGE = """
        if {marker!r} in command:  # stuck where no signal reaches: SIGALRM blocked, then a long sleep
            import signal
            import time

            signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGALRM}})
            time.sleep(600)
"""


def build_force_push(directory: Path, wedge_on: str = "") -> Path:
    """A deny miner in ``directory/force_push`` that passes its own test; returns its folder. With
    ``wedge_on``, its extractor never returns on a command holding that text, and blocks ``SIGALRM``."""
    folder = new_miner("force_push", directory)
    anchor = '        call = Text(text=event.tool_use_id or f"line {event.span.line}")\n'
    extract = (
        FORCE_PUSH_EXTRACT.replace(anchor, anchor + WEDGE.format(marker=wedge_on))
        if wedge_on
        else FORCE_PUSH_EXTRACT
    )
    (folder / "extract.py").write_text(extract)
    (folder / "rules.dl").write_text(FORCE_PUSH_RULES)
    labels = [(folder / "fixtures" / "labels.tsv").read_text()]
    for instance, label, start, command in FORCE_PUSH_RUNS:
        run = folder / "fixtures" / instance
        run.mkdir()
        call = {
            "session_id": instance,
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": f"toolu_{instance}",
        }
        (run / "events.jsonl").write_text(hook_line(start, call) + "\n")
        flagged = start.replace("T0", "T1") if label == "+" else "-"
        labels.append(f"{instance}\t{label}\t{start}\t{flagged}\ttest\n")
    (folder / "fixtures" / "labels.tsv").write_text("".join(labels))
    origin = f"OURO_MINERS_PATH:{directory}"
    miner_test(load_miner(folder, origin), write=True)
    report = miner_test(load_miner(folder, origin))
    assert report.passed, "\n".join(report.lines())
    return folder


def run_hook(
    command: str, payload: Any, env: dict[str, str] | None = None, timeout: float = 20
) -> subprocess.CompletedProcess[str]:
    """Run a hook command as Claude Code does: through a shell, the JSON payload on stdin."""
    stdin = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        command,
        shell=True,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "OURO_HOOK_AUTOFLUSH": "0", **(env or {})},
        check=False,
    )


def wait_for(predicate: Any, seconds: float = 60.0) -> None:
    """Poll until ``predicate()`` holds (a gate server starting on a busy machine takes a few seconds)."""
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def closed_port() -> int:
    """A localhost port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def pre_tool(session: str, command: str, call: str) -> dict[str, Any]:
    """A PreToolUse payload for a Bash call, shaped like Claude Code's."""
    return {
        "session_id": session,
        "transcript_path": f"/tmp/{session}.jsonl",
        "cwd": "/home/dev/project",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run it"},
        "tool_use_id": call,
    }


def post_tool(session: str, command: str, call: str, failed: bool = False) -> dict[str, Any]:
    """The PostToolUse (or PostToolUseFailure) payload of that call."""
    payload = {
        **pre_tool(session, command, call),
        "hook_event_name": "PostToolUseFailure" if failed else "PostToolUse",
    }
    if failed:
        payload |= {"error": "Exit code 143", "is_interrupt": False}
    else:
        payload["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}
    return payload


def gate_command(state: Path, names: list[str], start: bool = True) -> str:
    """Compile the named accepted miners into ``state``'s gate cache, start its server (unless ``start`` is
    false), and return the command Claude Code would run (read from the merged settings)."""
    compiled = compile_gates(state, names)
    settings = merge_settings({}, hook_command(state))
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert isinstance(command, str)
    if compiled.gates and start:
        start_server(str(state))
        wait_for(lambda: notify(str(state), {"op": "ping"}, wait_s=1.0))
    return command


def stop_server(state: Path) -> None:
    """Stop ``state``'s gate server, if one runs."""
    pid = server_pid(str(state))
    notify(str(state), {"op": "stop"}, wait_s=2.0)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)


def decision(result: subprocess.CompletedProcess[str]) -> str:
    """``deny`` or ``allow`` from a PreToolUse hook's output (exit 0 asserted)."""
    assert result.returncode == 0, result.stderr
    if not result.stdout.strip():
        return "allow"
    output = json.loads(result.stdout)["hookSpecificOutput"]
    return str(output.get("permissionDecision", "allow"))


@contextlib.contextmanager
def miners_path(folder: Path | None) -> Iterator[None]:
    """``OURO_MINERS_PATH`` set to ``folder`` (None: unset) for the block, as it was after it."""
    previous = os.environ.pop("OURO_MINERS_PATH", None)
    if folder is not None:
        os.environ["OURO_MINERS_PATH"] = str(folder)
    try:
        yield
    finally:
        os.environ.pop("OURO_MINERS_PATH", None)
        if previous is not None:
            os.environ["OURO_MINERS_PATH"] = previous


@contextlib.contextmanager
def self_match_gate(state: Path, start: bool = True) -> Iterator[str]:
    """``state`` gated by the installed self-match alone, its server started unless ``start`` is false;
    yields the hook command, and stops the server after (skips when self-match is not accepted)."""
    import pytest

    state.mkdir(parents=True, exist_ok=True)
    with miners_path(None):
        try:
            command = gate_command(state, ["self-match"], start=start)
            if not json.loads((state / "gates.json").read_text())["gates"]:
                pytest.skip("self-match does not pass its own test yet, so it is not a gate")
            yield command
        finally:
            stop_server(state)

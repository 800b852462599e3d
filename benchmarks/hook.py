"""Hook benchmark: the installed ``ouro hook`` command's PreToolUse latency as a session grows.

    .venv/bin/python benchmarks/hook.py [--sizes 100,5000,50000] [--calls 20] [--gap 1] [--warn next]

For each size, one Claude Code session is grown to that many events through the hook itself: every
payload of a generated session (``SessionStart``, prompts, ``PreToolUse`` and ``PostToolUse`` or
``PostToolUseFailure`` for a realistic mix of tools, a few Bash calls offenses the shipped miners look
for) goes through ``ops.hook.run``, the function the hook command runs, so each is recorded, spooled and,
on ``PreToolUse``, decided by the gate server, as the session's own calls were (in this process: a fresh
interpreter per event would take half an hour at 50,000). The gates are every shipped accepted miner,
compiled into the state's cache. Then ``--calls`` PreToolUse calls ``--gap`` seconds apart (the tool runs
and the agent thinks between two), each the command ``ouro hooks install`` writes, taken from
``ops.hooks_install.hook_command`` (``python -S -P …/ops/hook_script.py --state DIR``, the payload on stdin), a whole
process timed from spawn to exit;
one call in ten is a ``pkill -f`` that matches itself and must be denied, the others innocent and allowed.
Printed per size: p50/p95 wall, the gate server's own decision time (``OURO_HOOK_TRACE``), the server's
resident memory, and a hook process with no gate beside it (the interpreter and the hook's own imports).
Bytecode is cached as in a user's environment (``PYTHONPYCACHEPREFIX`` under the temporary folder).
``--warn sync`` decides warn gates with each call instead of on the session's next one.

The last line is p50/p95 at each size (target: p95 under 60 ms at 5,000 and at 50,000 events).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
for folder in (HERE, HERE.parent):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from corpus import BASH, _pick, _tool_input  # noqa: E402  (after the path is set)

SESSION = "bench-session"
PKILL = {"command": "pkill -f 'node server.js'"}
"""The offending call: ``pkill -f`` whose pattern is in its own command line."""


def session_payloads(rng: random.Random, events: int) -> Iterator[dict[str, Any]]:
    """One Claude Code session's hook payloads, ``events`` of them (the last pair may overshoot by one)."""
    base = {
        "session_id": SESSION,
        "transcript_path": f"/home/u/.claude/projects/p/{SESSION}.jsonl",
        "cwd": "/home/dev/project",
        "permission_mode": "default",
    }
    yield {**base, "hook_event_name": "SessionStart"}
    written, n = 1, 0
    while written < events:
        if n % 25 == 0:
            yield {**base, "hook_event_name": "UserPromptSubmit", "prompt": "carry on with the next step"}
            written += 1
        tool = _pick(rng)
        call = {**base, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": _tool_input(rng, tool),
                "tool_use_id": f"toolu_{n:06d}"}  # fmt: skip
        failed = rng.random() < 0.08
        done = {**call, "hook_event_name": "PostToolUseFailure" if failed else "PostToolUse"}
        done |= {"error": "Exit code 1"} if failed else {"tool_response": {"stdout": "ok " * rng.randrange(5, 60)}}
        yield call
        yield done
        written, n = written + 2, n + 1


def grow(state: Path, events: int, rng: random.Random) -> float:
    """Feed a session of ``events`` payloads through the hook's own ``run``; returns the seconds it took."""
    from ouroboros_gates.ops.hook import run

    started = time.perf_counter()
    for payload in session_payloads(rng, events):
        run(json.dumps(payload).encode(), str(state), time.monotonic() + 10)
    return time.perf_counter() - started


def _hook(state: Path, payload: dict[str, Any], env: dict[str, str]) -> tuple[float, float | None, bool]:
    """One whole hook process: its wall seconds, the server's decision seconds, and whether it denied."""
    from ouroboros_gates.ops.hooks_install import hook_command

    argv = shlex.split(hook_command(state))  # the command exactly as ``ouro hooks install`` writes it
    started = time.perf_counter()
    done = subprocess.run(
        argv,
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        check=False,
        timeout=30,
    )
    elapsed = time.perf_counter() - started
    trace = [line for line in done.stderr.decode().splitlines() if line.startswith("ouro hook: trace ")]
    if done.returncode != 0 or len(trace) != len(done.stderr.decode().splitlines()):
        raise SystemExit(f"the hook failed: {done.returncode} {done.stderr.decode()[:300]}")
    server = float(trace[0].rsplit("server_ms=", 1)[1]) / 1000 if trace else None
    return elapsed, server, b'"deny"' in done.stdout


def _pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, round(q * (len(values) - 1)))] * 1000


def _memory(pid: int | None) -> str:
    """The server's resident and peak resident memory, from /proc."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (OSError, TypeError):
        return "server memory unknown"
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    rss, peak = (int(fields[name].split()[0]) / 1024 for name in ("VmRSS", "VmHWM"))
    return f"server RSS {rss:.0f} MiB (peak {peak:.0f})"


def measure(root: Path, events: int, calls: int, gap: float, seed: int) -> tuple[float, float]:
    """Grow a session of ``events`` through the hook, then time ``calls`` whole hook processes on it."""
    from ouroboros_gates.ops.gate.cache import compile_gates
    from ouroboros_gates.ops.gate.client import notify, server_pid

    rng = random.Random(seed)
    state = root / f"state-{events}"
    state.mkdir()
    compiled = compile_gates(state)
    floor_state = root / f"floor-{events}"
    floor_state.mkdir()
    (floor_state / "gates.json").write_text(json.dumps({"version": 1, "gates": []}))
    env = {**os.environ, "OURO_HOOK_TRACE": "1"}  # the timed calls only: growing, the hook prints nothing
    wall, server, floor, denied = [], [], [], 0
    try:
        grown = grow(state, events, rng)
        lines = sum(1 for _ in (state / "runs" / SESSION / "events.jsonl").open("rb"))
        for n in range(calls):
            tool = "Bash" if n % 10 == 5 else _pick(rng)
            innocent = {"command": rng.choice(BASH)} if tool == "Bash" else _tool_input(rng, tool)
            given = PKILL if n % 10 == 5 else innocent
            payload = {"session_id": SESSION, "hook_event_name": "PreToolUse", "tool_name": tool,
                       "tool_input": given, "tool_use_id": f"toolu_b{n}"}  # fmt: skip
            elapsed, decided, deny = _hook(state, payload, env)
            if deny != (n % 10 == 5):
                raise SystemExit(f"call {n} ({given}) was {'denied' if deny else 'allowed'} (benchmark void)")
            wall.append(elapsed)
            server += [decided] if decided is not None else []
            denied += deny
            floor.append(_hook(floor_state, payload, env)[0])
            time.sleep(gap)  # the tool runs, the agent thinks: the next call comes later
        memory = _memory(server_pid(str(state)))
    finally:
        pid = server_pid(str(state))
        notify(str(state), {"op": "stop"}, wait_s=2.0)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
    names = ", ".join(f"{g.name} ({g.gate})" for g in compiled.gates)
    print(
        f"{events:>6}-event session ({lines} lines, grown through the hook in {grown:.1f} s): {calls} calls "
        f"({denied} denied) {gap:.2f} s apart; gates: {names}"
    )
    print(
        f"        whole process p50 {_pct(wall, 0.5):6.1f} ms  p95 {_pct(wall, 0.95):6.1f} ms  (gate server's "
        f"decision p50 {_pct(server, 0.5):5.1f} ms  p95 {_pct(server, 0.95):5.1f} ms; hook process with no "
        f"gate p50 {_pct(floor, 0.5):5.1f} ms; {memory})"
    )
    return _pct(wall, 0.5), _pct(wall, 0.95)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,5000,50000", help="session sizes in events, comma-separated")
    parser.add_argument("--calls", type=int, default=20, help="timed PreToolUse calls per size")
    parser.add_argument("--gap", type=float, default=1.0, help="seconds between two timed calls")
    parser.add_argument("--warn", choices=("next", "sync"), default="next", help="OURO_HOOK_WARN")
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args(argv)
    sizes = [int(size) for size in options.sizes.split(",")]
    root = Path(tempfile.mkdtemp(prefix="ouro-bench-hook-"))
    saved = dict(os.environ)
    os.environ.update({
        "OURO_HOOK_WARN": options.warn, "OURO_HOOK_AUTOFLUSH": "0", "OURO_GATE_IDLE_S": "300",
        "PYTHONPYCACHEPREFIX": str(root / "pycache"),
    })  # fmt: skip
    for name in ("OURO_MINERS_PATH", "PYTHONDONTWRITEBYTECODE", "OURO_HOOK_TRACE"):
        os.environ.pop(name, None)
    try:
        from ouroboros_gates.ops.hooks_install import hook_command

        print(f"hook PreToolUse, warn gates {options.warn}, whole processes ({hook_command(root / 'state-N')})")
        found = [(size, *measure(root, size, options.calls, options.gap, options.seed)) for size in sizes]
        print("hook p50/p95: " + ", ".join(f"{size:,} events {p50:.1f}/{p95:.1f} ms" for size, p50, p95 in found))
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

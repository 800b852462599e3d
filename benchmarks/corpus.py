"""Corpus benchmark: mining throughput, h_fleet against the reference jq command, and the hook's latency.

    .venv/bin/python benchmarks/corpus.py [--runs 60] [--events 500] [--session 5000] [--calls 20] [--gap 1]

Three figures over generated data (seeded; written to a temporary folder, removed afterwards):

(a) **Mining throughput.** ``--runs`` harness runs of about ``--events`` lines each, in the CSF envelope
    around Claude Code stream-json (``assistant`` tool calls with usage, ``user`` tool results, ``result``
    lines with usage and cost), a realistic mix of tools with the offenses the shipped miners look for
    sprinkled in (``pkill -f`` self-matches, sleep polls, repeated failures, late draft pull requests,
    cold caches). Every shipped miner (each folder of ``miners/``) goes from the raw JSONL to findings:
    the corpus readers, its ``extract``, its rules at its fitted κ* (none for a miner that is not
    accepted). Printed: events read per second, per miner and for all of them in turn.
(b) **h_fleet, ours against jq.** The reference ``jq`` command (docs/loop.md) over the same files, in a subprocess,
    against ``workers.measurer.read_h_fleet`` (the code path of ``ouro measure h-fleet``) in this
    process; both best of three wall times, their values compared (the benchmark is void if they differ).
(c) **Hook decision latency.** A ``--session``-event Claude Code session recorded as ``ouro hook`` records
    it (hook payloads in the CSF envelope), every shipped accepted miner compiled into the gate cache,
    the gate server warmed up, then ``--calls`` PreToolUse calls ``--gap`` seconds apart (the tool runs and
    the agent thinks between two calls; one call in ten is a ``pkill -f`` that self-matches), each a
    whole ``python -P -m ops.hook`` process with the payload on stdin, timed from spawn to exit
    (p50/p95), with the gate server's own decision time beside it (``OURO_HOOK_TRACE``) and a hook
    process with no gate (the interpreter and the hook's stdlib imports). Bytecode is cached as in a
    user's environment (``PYTHONPYCACHEPREFIX`` under the temporary folder). Measured twice: warn gates
    told on the session's next call (``OURO_HOOK_WARN=next``, the default: only deny gates stand on the
    hot path, the warn gates run in the gap) and decided with the call (``sync``: nothing is deferred,
    so no gap is needed).

The last line is the h_fleet ratio ours/jq (target ≤ 0.5). Defaults keep it under two minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

JQ_PROGRAM = """[inputs | select(.event_type == "result") | .event.usage // {}
  | {r: (.cache_read_input_tokens // 0),
     t: ((.input_tokens // 0) + (.cache_creation_input_tokens // 0) + (.cache_read_input_tokens // 0))}]
  | (map(.r) | add) / (map(.t) | add)"""

BASH = [
    "ls -la",
    "git status",
    "git diff --stat",
    "pytest -q tests/unit",
    "rg -n 'def main' src",
    "cat README.md",
    "python -m pip list",
    "make lint",
    "git log --oneline -5",
    "npm test",
    "docker ps",
    "uv run pytest -x",
]
OFFENSES = [
    "pkill -f 'python -m http.server'",
    "pgrep -f pytest",
    "sleep 30; gh run view 123",
    "gh pr create --draft --title wip --body x",
    "while sleep 5; do curl -s localhost:8000 && break; done",
]
TOOLS = [("Bash", 45), ("Read", 22), ("Edit", 12), ("Grep", 10), ("Glob", 6), ("Write", 5)]


def _tool_input(rng: random.Random, tool: str) -> dict[str, Any]:
    if tool == "Bash":
        return {"command": rng.choice(OFFENSES) if rng.random() < 0.03 else rng.choice(BASH), "description": "run"}
    if tool in ("Read", "Write", "Edit"):
        path = f"/home/dev/project/src/module_{rng.randrange(40)}.py"
        return {"file_path": path} | ({"old_string": "a", "new_string": "b"} if tool == "Edit" else {})
    return {"pattern": rng.choice(["TODO", "def ", "import os", "*.py"])}


def _pick(rng: random.Random) -> str:
    return rng.choices([t for t, _ in TOOLS], weights=[w for _, w in TOOLS])[0]


def _stamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _line(moment: datetime, event_type: str, event: dict[str, Any]) -> str:
    """One CSF envelope line."""
    return json.dumps({"ts": _stamp(moment), "event_type": event_type, "event": event})


def stream_run(rng: random.Random, run: str, lines: int, start: datetime) -> Iterator[str]:
    """One harness run: CSF envelope lines around Claude Code stream-json."""
    now, cold = start, rng.random() < 0.3
    yield _line(now, "system", {"type": "system", "subtype": "init", "session_id": run, "model": "claude-opus-4-5"})
    usage: dict[str, int] = {}
    for n in range(lines // 2 - 1):
        now += timedelta(seconds=rng.randrange(2, 40))
        tool, call = _pick(rng), f"toolu_{run[:8]}_{n:05d}"
        creation, read = rng.randrange(50, 4000) * (20 if cold else 1), rng.randrange(20_000, 90_000)
        usage = {"input_tokens": 3, "cache_creation_input_tokens": creation, "cache_read_input_tokens": read}
        use = {"type": "tool_use", "id": call, "name": tool, "input": _tool_input(rng, tool)}
        message = {"id": f"msg_{run[:8]}_{n}", "role": "assistant", "usage": usage, "content": [use]}
        yield _line(now, "assistant", {"type": "assistant", "session_id": run, "message": message})
        failed = rng.random() < 0.08
        text = "Exit code 1\nerror" if failed else "ok " * rng.randrange(5, 60)
        result = {"type": "tool_result", "tool_use_id": call, "is_error": failed, "content": text}
        yield _line(now, "user", {"type": "user", "session_id": run, "message": {"role": "user", "content": [result]}})
        if n % 60 == 59 or n == lines // 2 - 2:
            done = {"type": "result", "subtype": "success", "session_id": run, "usage": usage}
            yield _line(now, "result", {**done, "total_cost_usd": n / 100})


def hook_session(rng: random.Random, session: str, events: int, start: datetime) -> Iterator[str]:
    """One Claude Code session as ``ouro hook`` records it: hook payloads in the CSF envelope."""
    base = {
        "session_id": session,
        "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
        "cwd": "/home/dev/project",
        "permission_mode": "default",
    }
    now, written, n = start, 0, 0
    yield json.dumps({"ts": _stamp(now), "event_type": "hook", "event": {**base, "hook_event_name": "SessionStart"}})
    written += 1
    while written < events:
        now += timedelta(seconds=rng.randrange(1, 20))
        if n % 25 == 0:
            prompt = {**base, "hook_event_name": "UserPromptSubmit", "prompt": "carry on with the next step"}
            yield json.dumps({"ts": _stamp(now), "event_type": "hook", "event": prompt})
            written += 1
        tool = _pick(rng)
        call = {
            **base,
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": _tool_input(rng, tool),
            "tool_use_id": f"toolu_{n:06d}",
        }
        failed = rng.random() < 0.08
        done = {**call, "hook_event_name": "PostToolUseFailure" if failed else "PostToolUse"}
        done |= {"error": "Exit code 1"} if failed else {"tool_response": {"stdout": "ok " * rng.randrange(5, 60)}}
        yield json.dumps({"ts": _stamp(now), "event_type": "hook", "event": call})
        yield json.dumps({"ts": _stamp(now), "event_type": "hook", "event": done})
        written, n = written + 2, n + 1


def write_corpus(root: Path, runs: int, lines: int, seed: int) -> list[Path]:
    rng = random.Random(seed)
    files = []
    for index in range(runs):
        run = f"{rng.getrandbits(32):08x}-bench-{index:04d}"
        path = root / run / "events.jsonl"
        path.parent.mkdir(parents=True)
        start = datetime(2026, 10, 1, tzinfo=UTC) + timedelta(hours=index)
        path.write_text("\n".join(stream_run(rng, run, lines, start)) + "\n")
        files.append(path)
    return files


def mining(files: list[Path]) -> None:
    """(a): raw JSONL to findings, per shipped miner, with events read per second."""
    from miners import corpus_items, discover, extract_facts, find
    from workers.miner.mine import accepted_gates

    knees = {gate.miner.name: gate.knee for gate in accepted_gates(extra="")}
    miners, _broken = discover(extra="")
    items = corpus_items([str(path) for path in files])
    events = sum(1 for item in items for _ in item.events())
    lines = sum(1 for path in files for _ in path.open("rb"))
    size = sum(path.stat().st_size for path in files)
    print(f"(a) mining: {len(files)} runs, {lines} lines, {events} events, {size / 1e6:.1f} MB; events/s per miner")
    total = 0.0
    for miner in miners.values():
        started = time.perf_counter()
        found = find(miner, miner.rules(), extract_facts(miner, items), knees.get(miner.name))
        seconds = time.perf_counter() - started
        total += seconds
        knee = "none" if knees.get(miner.name) is None else knees[miner.name]
        accepted = "accepted" if miner.name in knees else "not accepted"
        print(
            f"    {miner.name:<16} {seconds:7.2f} s {events / seconds:10.0f} events/s  {len(found):5d} findings  "
            f"(κ* {knee}, {accepted})"
        )
    print(
        f"    all {len(miners)} miners  {total:7.2f} s {events * len(miners) / total:10.0f} events/s "
        f"({events / total:.0f} corpus events/s through every miner)"
    )


def h_fleet(files: list[Path]) -> float:
    """(b): ours against the reference jq command; returns the ratio of wall times ours / jq."""
    from workers.measurer import read_h_fleet

    if shutil.which("jq") is None:
        raise SystemExit("jq is not installed: the h_fleet comparison needs it (apt-get install jq)")
    ours_s, jq_s = [], []
    for _ in range(3):
        started = time.perf_counter()
        ours = read_h_fleet(files).value
        ours_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        done = subprocess.run(["jq", "-n", JQ_PROGRAM, *map(str, files)], capture_output=True, text=True, check=True)
        jq_s.append(time.perf_counter() - started)
    theirs = float(done.stdout)
    if ours is None or abs(ours - theirs) > 1e-12 * max(1.0, abs(theirs)):
        raise SystemExit(f"h_fleet differs: ours {ours!r}, jq {theirs!r} (benchmark void)")
    print(
        f"(b) h_fleet over the same {len(files)} files: ours {ours:.6f} in {min(ours_s):.3f} s, "
        f"jq {theirs:.6f} in {min(jq_s):.3f} s (best of 3 wall)"
    )
    return min(ours_s) / min(jq_s)


def _hook(state: Path, payload: dict[str, Any], env: dict[str, str]) -> tuple[float, float | None, bool]:
    """One whole hook process: its wall seconds, the server's decision seconds, and whether it denied."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-P", "-m", "ops.hook", "--state", str(state)],
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


def hook_latency(root: Path, session_events: int, calls: int, seed: int, warn: str, gap: float) -> None:
    """(c): whole-process PreToolUse latency on a long session, with every shipped accepted miner."""
    from ops.gate.cache import compile_gates
    from ops.gate.client import notify, server_pid

    rng = random.Random(seed)
    state = root / f"state-{warn}"
    log = state / "bench-session" / "events.jsonl"
    log.parent.mkdir(parents=True)
    started_at = datetime.now(UTC) - timedelta(minutes=5)  # a young session: draft-pr-late stays quiet
    log.write_text("\n".join(hook_session(rng, "bench-session", session_events, started_at)) + "\n")
    # As in a user's environment: bytecode cached (here under the temporary folder, not in the tree).
    env = {
        **os.environ,
        "OURO_HOOK_WARN": warn,
        "OURO_HOOK_AUTOFLUSH": "0",
        "OURO_GATE_IDLE_S": "120",
        "OURO_HOOK_TRACE": "1",
        "PYTHONPYCACHEPREFIX": str(root / "pycache"),
    }
    for name in ("OURO_MINERS_PATH", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    compiled = compile_gates(state)
    names = ", ".join(f"{g.name} ({g.gate})" for g in compiled.gates)
    floor_state = root / f"floor-{warn}"
    floor_state.mkdir()
    (floor_state / "gates.json").write_text(json.dumps({"version": 1, "gates": []}))
    probe = {
        "session_id": "bench-session",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_warm",
    }
    wall, server, floor, denied = [], [], [], 0
    try:
        _hook(state, probe, env)  # starts the server…
        deadline = time.monotonic() + 60
        while not notify(str(state), {"op": "ping"}, wait_s=1.0):
            if time.monotonic() > deadline:
                raise SystemExit("the gate server did not start")
        _hook(state, probe, env)  # …which reads the whole session once
        for n in range(calls):
            tool = "Bash" if n % 10 == 5 else _pick(rng)  # one call in ten offends: the deny path is timed too
            given = {"command": "pkill -f 'node server.js'"} if n % 10 == 5 else _tool_input(rng, tool)
            payload = {**probe, "tool_name": tool, "tool_input": given, "tool_use_id": f"toolu_b{n}"}
            elapsed, decided, deny = _hook(state, payload, env)
            wall.append(elapsed)
            server += [decided] if decided is not None else []
            denied += deny
            floor.append(_hook(floor_state, payload, env)[0])
            time.sleep(gap)  # the tool runs, the agent thinks: the next call comes later
    finally:
        pid = server_pid(str(state))
        notify(str(state), {"op": "stop"}, wait_s=2.0)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
    print(
        f"(c) hook PreToolUse, warn gates {warn}: {session_events}-event session, {calls} calls "
        f"({denied} denied), {gap:.2f} s apart; gates: {names}"
    )
    print(
        f"    whole process p50 {_pct(wall, 0.5):6.1f} ms  p95 {_pct(wall, 0.95):6.1f} ms  "
        f"(gate server's decision p50 {_pct(server, 0.5):6.1f} ms  p95 {_pct(server, 0.95):6.1f} ms; "
        f"hook process with no gate p50 {_pct(floor, 0.5):5.1f} ms)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60, help="generated harness runs for (a) and (b)")
    parser.add_argument("--events", type=int, default=500, help="lines per generated run")
    parser.add_argument("--session", type=int, default=5000, help="events in the hook's session for (c)")
    parser.add_argument("--calls", type=int, default=20, help="timed PreToolUse calls for (c), per warn mode")
    parser.add_argument("--gap", type=float, default=1.0, help="seconds between two calls in (c), warn gates next")
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="ouro-bench-corpus-"))
    try:
        files = write_corpus(root / "runs", options.runs, options.events, options.seed)
        mining(files)
        ratio = h_fleet(files)
        if options.calls:
            for warn, gap in (("next", options.gap), ("sync", 0.0)):  # sync defers nothing: no gap needed
                hook_latency(root, options.session, options.calls, options.seed, warn, gap)
        print(f"ratio ours/jq h_fleet: {ratio:.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

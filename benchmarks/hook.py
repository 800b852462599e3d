"""Hook benchmark: the installed ``ouro hook`` command's PreToolUse latency as a session grows.

    .venv/bin/python benchmarks/hook.py [--sizes 100,5000,50000] [--calls 20] [--gap 1] [--warn next]
                                        [--long-mb 10] [--long-rounds 6]

For each size, one Claude Code session is grown to that many events through the hook itself: every
payload of a generated session (``SessionStart``, prompts, ``PreToolUse`` and ``PostToolUse`` or
``PostToolUseFailure`` for a realistic mix of tools, a few Bash calls offenses the shipped miners look
for) goes through ``ops.hook.run``, the function the hook command runs, so each is recorded, spooled and,
on ``PreToolUse``, decided by the gate server, as the session's own calls were (in this process: a fresh
interpreter per event would take half an hour at 50,000). The gates are every shipped accepted miner,
compiled into the state's cache. Then ``--calls`` PreToolUse calls ``--gap`` seconds apart (the tool runs
and the agent thinks between two), each the command ``ouro hooks install`` writes, taken from
``ops.hooks_install.hook_command`` (``python -S -P …/ops/hook_script.py --state DIR``, the payload on stdin),
a whole process timed from spawn to exit; one call in ten is a ``pkill -f`` that matches itself and must be
denied, the others innocent and allowed. Printed per size: p50/p95 wall, the gate server's own decision time
(``OURO_HOOK_TRACE``), the server's resident memory, and a hook process with no gate beside it (the
interpreter and the hook's own imports). Bytecode is cached as in a user's environment
(``PYTHONPYCACHEPREFIX`` under the temporary folder).
``--warn sync`` decides warn gates with each call instead of on the session's next one.

Then a long command (``--long-mb``, 10 MB: one word, as an agent's pasted blob is) goes through the same
installed hook, alternately innocent and after a self-matching ``pkill -f`` (denied), beside a small
command (the peer) on the same server, and a self-matching call after them must still be denied; printed:
the medians, whole process and the server's own decision, and their ratio to the peer's. Last, the shell
word splitter alone (``miners.shell.split_words``) on one long word of 4 and 8 MB, and ``shlex`` (what it
replaced) on 128 and 256 KiB: the 2x/1x time ratios (2 is linear, 4 quadratic).

The last line is p50/p95 at each size (target: p95 under 60 ms at 5,000 and at 50,000 events), then the
long command's whole-process median and its ratio to the peer's, and the two splitters' ratios.
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
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
for folder in (HERE, HERE.parent):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from _markdown import add_markdown_option, against, write_block  # noqa: E402  (after the path is set)
from corpus import BASH, _pick, _tool_input  # noqa: E402

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
        call = {
            **base,
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": _tool_input(rng, tool),
            "tool_use_id": f"toolu_{n:06d}",
        }
        failed = rng.random() < 0.08
        done = {**call, "hook_event_name": "PostToolUseFailure" if failed else "PostToolUse"}
        done |= (
            {"error": "Exit code 1"}
            if failed
            else {"tool_response": {"stdout": "ok " * rng.randrange(5, 60)}}
        )
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


class Latency(NamedTuple):
    """One size's whole-process percentiles (ms), the hook's and the no-gate hook's, and the server's p95."""

    p50: float
    p95: float
    floor50: float
    floor95: float
    server95: float


def measure(root: Path, events: int, calls: int, gap: float, seed: int) -> Latency:
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
            payload = {
                "session_id": SESSION,
                "hook_event_name": "PreToolUse",
                "tool_name": tool,
                "tool_input": given,
                "tool_use_id": f"toolu_b{n}",
            }
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
        f"        whole process p50 {_pct(wall, 0.5):6.1f} ms  p95 {_pct(wall, 0.95):6.1f} ms  (gate "
        "server's "
        f"decision p50 {_pct(server, 0.5):5.1f} ms  p95 {_pct(server, 0.95):5.1f} ms; hook process with no "
        f"gate p50 {_pct(floor, 0.5):5.1f} ms; {memory})"
    )
    return Latency(_pct(wall, 0.5), _pct(wall, 0.95), _pct(floor, 0.5), _pct(floor, 0.95), _pct(server, 0.95))


def _call(session: str, command: str, call: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": call,
    }


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2] * 1000


def measure_long(root: Path, megabytes: int, rounds: int) -> tuple[float, float]:
    """A ``megabytes`` MB command through the installed hook beside a small one; (long, small) medians, ms."""
    from ouroboros_gates.ops.gate.cache import compile_gates
    from ouroboros_gates.ops.gate.client import notify

    state = root / "state-long"
    state.mkdir()
    compile_gates(state)
    env = {**os.environ, "OURO_HOOK_TRACE": "1", "OURO_HOOK_TIMEOUT_S": "600"}  # decided, never timed out
    blob = "echo '" + "a" * (megabytes << 20) + "'"
    timed: dict[str, list[float]] = {"long": [], "small": [], "long server": [], "small server": []}
    try:
        _hook(state, _call("long", "true", "warm"), env)  # the server started, off the clock
        for n in range(rounds):
            offends = n % 2 == 1
            for kind, command in (
                ("long", f"{PKILL['command']}; {blob}" if offends else blob),
                ("small", "ls"),
            ):
                elapsed, server, deny = _hook(state, _call("long", command, f"{kind}{n}"), env)
                if deny != (offends and kind == "long"):
                    raise SystemExit(
                        f"{kind} call {n} was {'denied' if deny else 'allowed'} (benchmark void)"
                    )
                timed[kind].append(elapsed)
                timed[f"{kind} server"].append(server or 0.0)
        if not _hook(state, _call("long", PKILL["command"], "after"), env)[2]:
            raise SystemExit("a self-matching call after the long ones was allowed (benchmark void)")
    finally:
        notify(str(state), {"op": "stop"}, wait_s=2.0)
    long_ms, small_ms = _median(timed["long"]), _median(timed["small"])
    print(
        f"{megabytes} MB command ({rounds} calls, every other one denied) beside a small one: whole process "
        f"median {long_ms:.0f} ms against {small_ms:.0f} ms ({long_ms / small_ms:.1f}x); the gate server's "
        f"decision {_median(timed['long server']):.1f} ms against {_median(timed['small server']):.1f} ms; "
        "the next self-matching call denied"
    )
    return long_ms, small_ms


def measure_split() -> tuple[list[float], list[float]]:
    """``split_words`` on one word of 4 and 8 MB (the best of 9, the two sizes taking turns: a few
    milliseconds each), ``shlex`` on 128 and 256 KiB (once each: seconds): each one's CPU seconds at its two
    sizes."""
    from ouroboros_gates.miners.shell import split_words

    def timed(work: Any, text: str) -> float:  # CPU time: on a shared machine, wall time is mostly waiting
        started = time.process_time()
        work(text)
        return time.process_time() - started

    def word(size: int) -> str:
        return "echo '" + "a" * size + "'"

    texts = [word(mb << 20) for mb in (4, 8)]
    turns = [[timed(split_words, text) for text in texts] for _ in range(9)]
    ours = [min(turn[n] for turn in turns) for n in range(2)]
    peer = [timed(lambda text: list(shlex.shlex(text, posix=True)), word(kb << 10)) for kb in (128, 256)]
    print(
        f"shell words of one long word, CPU time: split_words 4 MB {ours[0] * 1000:.1f} ms, "
        f"8 MB {ours[1] * 1000:.1f} ms; "
        f"shlex 128 KiB {peer[0] * 1000:.0f} ms, 256 KiB {peer[1] * 1000:.0f} ms"
    )
    return ours, peer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,5000,50000", help="session sizes in events, comma-separated")
    parser.add_argument("--calls", type=int, default=20, help="timed PreToolUse calls per size")
    parser.add_argument("--gap", type=float, default=1.0, help="seconds between two timed calls")
    parser.add_argument("--warn", choices=("next", "sync"), default="next", help="OURO_HOOK_WARN")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--long-mb", type=int, default=10, help="the long command's size in MB")
    parser.add_argument("--long-rounds", type=int, default=6, help="long (and small) calls timed")
    add_markdown_option(parser)
    options = parser.parse_args(argv)
    sizes = [int(size) for size in options.sizes.split(",")]
    root = Path(tempfile.mkdtemp(prefix="ouro-bench-hook-"))
    saved = dict(os.environ)
    os.environ.update(
        {
            "OURO_HOOK_WARN": options.warn,
            "OURO_HOOK_AUTOFLUSH": "0",
            "OURO_GATE_IDLE_S": "300",
            "PYTHONPYCACHEPREFIX": str(root / "pycache"),
        }
    )
    for name in ("OURO_MINERS_PATH", "PYTHONDONTWRITEBYTECODE", "OURO_HOOK_TRACE"):
        os.environ.pop(name, None)
    try:
        from ouroboros_gates.ops.hooks_install import hook_command

        print(
            f"hook PreToolUse, warn gates {options.warn}, whole processes ({hook_command(root / 'state-N')})"
        )
        found = {size: measure(root, size, options.calls, options.gap, options.seed) for size in sizes}
        long_ms, small_ms = measure_long(root, options.long_mb, options.long_rounds)
        ours, peer = measure_split()
        last = (
            "hook p50/p95: "
            + ", ".join(f"{size:,} events {got.p50:.1f}/{got.p95:.1f} ms" for size, got in found.items())
            + f"; {options.long_mb} MB command {long_ms:.0f} ms ({long_ms / small_ms:.1f}x a small one's)"
            + f"; words 2x/1x: split_words {ours[1] / ours[0]:.2f}x, shlex {peer[1] / peer[0]:.2f}x"
        )
        rows = _latency_rows(found, options.calls) + _long_rows(
            options.long_mb, long_ms, small_ms, ours, peer
        )
        write_block(options.markdown, "hook", ["measure", "ours", "peer", "ratio"], rows, last)
        print(last)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(root, ignore_errors=True)


def _latency_rows(found: dict[int, Latency], calls: int) -> list[list[str]]:
    """Per size, p50 and p95 of the gated hook against the hook process with no gate."""
    rows = []
    for size, got in found.items():
        session = f"PreToolUse, {size:,}-event session, {calls} calls, whole process"
        rows.append(
            [f"{session} p50, against the hook with no gate", *against(got.p50, got.floor50, "ms", 1)]
        )
        rows.append(
            [
                f"{session} p95, against the same (the gate server's decision p95 {got.server95:.1f} ms)",
                *against(got.p95, got.floor95, "ms", 1),
            ]
        )
    return rows


def _long_rows(
    mb: int, long_ms: float, small_ms: float, ours: list[float], peer: list[float]
) -> list[list[str]]:
    """The long command against a small one; how the word splitter's time grows against ``shlex``'s (no ratio
    of the two: they run at sizes a thousand times apart)."""

    def growth(times: list[float]) -> str:
        return f"{times[1] / times[0]:.2f}x ({times[0] * 1000:.1f} → {times[1] * 1000:.1f} ms)"

    return [
        [
            f"a {mb} MB command, whole process median, against a small command's",
            *against(long_ms, small_ms, "ms", 1),
        ],
        [
            "shell words of one long word, CPU time as it doubles (2x linear, 4x quadratic): split_words "
            "4 → 8 MB, shlex 128 → 256 KiB",
            growth(ours),
            growth(peer),
            "—",
        ],
    ]


if __name__ == "__main__":
    main()

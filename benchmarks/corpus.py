"""Corpus benchmark: mining throughput, and ``ouro measure h-fleet`` against the reference jq command
(docs/loop.md).

    .venv/bin/python benchmarks/corpus.py [--runs 60] [--events 500] [--hfleet-mb 64] [--repeat 5]

Two figures over generated data (seeded; written to a temporary folder, removed afterwards):

(a) **Mining throughput.** ``--runs`` harness runs of about ``--events`` lines each, in the CSF envelope
    around Claude Code stream-json (``assistant`` tool calls with usage, ``user`` tool results, ``result``
    lines with usage and cost), a realistic mix of tools with the offenses the shipped miners look for
    sprinkled in (``pkill -f`` self-matches, sleep polls, repeated failures, late draft pull requests,
    cold caches). Every shipped miner (each folder of ``miners/``) goes from the raw JSONL to findings:
    the corpus readers, its ``extract``, its rules at its fitted κ* (none for a miner that is not
    accepted). Printed: events read per second, per miner and for all of them in turn.
(b) **h_fleet, ours against jq, whole processes.** (a)'s runs and more of the same, ``--hfleet-mb`` in
    all: ``ouro measure h-fleet --json FILE…`` (the installed command, as a user runs it) against the
    reference ``jq`` command (docs/loop.md) over the same files, interleaved, best of ``--repeat`` wall each,
    their values compared (the benchmark is void if they differ). Beside them, the same command in a process
    that imports only ``ops.cli.measure`` (what a lazily loaded ``ouro`` loads for it). Bytecode is cached as
    in a user's environment (``PYTHONPYCACHEPREFIX`` under the temporary folder).

The hook's latency is ``benchmarks/hook.py``. The last line is the h_fleet ratio ours/jq (target ≤ 0.3).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _markdown import add_markdown_option, against, write_block

JQ_PROGRAM = """[inputs | if .event_type == "result" then .event.usage // {}
  elif .type == "result" and (has("event_type") | not) then .usage // {} else empty end
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
NO_PEER = ["—", "—"]
"""The jq and ratio cells of a row with no peer (mining: jq runs no miner)."""
TOOLS = [("Bash", 45), ("Read", 22), ("Edit", 12), ("Grep", 10), ("Glob", 6), ("Write", 5)]


def _tool_input(rng: random.Random, tool: str) -> dict[str, Any]:
    if tool == "Bash":
        return {
            "command": rng.choice(OFFENSES) if rng.random() < 0.03 else rng.choice(BASH),
            "description": "run",
        }
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
    yield _line(
        now, "system", {"type": "system", "subtype": "init", "session_id": run, "model": "claude-opus-4-5"}
    )
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
        yield _line(
            now, "user", {"type": "user", "session_id": run, "message": {"role": "user", "content": [result]}}
        )
        if n % 60 == 59 or n == lines // 2 - 2:
            done = {"type": "result", "subtype": "success", "session_id": run, "usage": usage}
            yield _line(now, "result", {**done, "total_cost_usd": n / 100})


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


def mining(files: list[Path]) -> list[list[str]]:
    """(a): raw JSONL to findings, per shipped miner, with events read per second; the table's rows."""
    from ouroboros_gates.miners import corpus_items, discover, extract_facts, find
    from ouroboros_gates.workers.miner.accept import accepted_gates

    knees = {gate.miner.name: gate.knee for gate in accepted_gates(extra="")}
    miners, _broken = discover(extra="")
    items = corpus_items([str(path) for path in files])
    events = sum(1 for item in items for _ in item.events())
    lines = sum(1 for path in files for _ in path.open("rb"))
    size = sum(path.stat().st_size for path in files)
    print(
        f"(a) mining: {len(files)} runs, {lines} lines, {events} events, {size / 1e6:.1f} MB; events/s per "
        "miner"
    )
    total, rows = 0.0, []
    for miner in miners.values():
        started = time.perf_counter()
        found = find(miner, miner.rules(), extract_facts(miner, items), knees.get(miner.name))
        seconds = time.perf_counter() - started
        total += seconds
        knee = "none" if knees.get(miner.name) is None else knees[miner.name]
        accepted = "accepted" if miner.name in knees else "not accepted"
        print(
            f"    {miner.name:<16} {seconds:7.2f} s {events / seconds:10.0f} events/s  {len(found):5d} "
            "findings  "
            f"(κ* {knee}, {accepted})"
        )
        rows.append(
            [f"mining, `{miner.name}` ({len(found)} findings)", f"{events / seconds:,.0f} events/s", *NO_PEER]
        )
    print(
        f"    all {len(miners)} miners  {total:7.2f} s {events * len(miners) / total:10.0f} events/s "
        f"({events / total:.0f} corpus events/s through every miner)"
    )
    whole = (
        f"mining, all {len(miners)} miners in turn ({len(files)} runs, {events:,} events, "
        f"{size / 1e6:.1f} MB)"
    )
    return [*rows, [whole, f"{events / total:,.0f} corpus events/s", *NO_PEER]]


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({done.returncode}): {done.stderr[:300]}")
    return elapsed, done.stdout


def h_fleet(files: list[Path], root: Path, repeat: int) -> tuple[float, list[list[str]]]:
    """(b): whole processes, ``ouro measure h-fleet --json`` against the reference jq command (docs/loop.md)
    on the same files, interleaved, best of ``repeat`` wall each; returns the ratio ours / jq and the table's
    rows."""
    ouro = Path(sys.executable).with_name("ouro")
    if shutil.which("jq") is None:
        raise SystemExit("jq is not installed: the h_fleet comparison needs it (apt-get install jq)")
    if not ouro.exists():
        raise SystemExit(f"{ouro} is missing: install the package first (pip install -e .)")
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(root / "pycache")}  # bytecode cached, as a user's is
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    paths = [str(path) for path in files]
    command = [str(ouro), "measure", "h-fleet", "--json", *paths]
    code = "import sys; from ouroboros_gates.ops.cli.measure import measure_app; measure_app(sys.argv[1:])"
    alone = [sys.executable, "-c", code, "h-fleet", "--json", *paths]
    _timed(command, env)  # the bytecode written once
    ours_s, alone_s, jq_s = [], [], []
    for _ in range(repeat):
        elapsed, out = _timed(command, env)
        ours_s.append(elapsed)
        alone_s.append(_timed(alone, env)[0])
        elapsed, theirs = _timed(["jq", "-n", JQ_PROGRAM, *paths], env)
        jq_s.append(elapsed)
    ours, jq = json.loads(out)["h_fleet"], float(theirs)
    if ours is None or ours != jq:
        raise SystemExit(f"h_fleet differs: ours {ours!r}, jq {jq!r} (benchmark void)")
    size = sum(path.stat().st_size for path in files) / 1e6
    print(
        f"(b) h_fleet over the same {len(files)} files ({size:.1f} MB), whole processes, best of {repeat} "
        "wall: "
        f"`ouro measure h-fleet --json` {min(ours_s):.3f} s, jq {min(jq_s):.3f} s (both {jq!r}); the command "
        f"alone (ops.cli.measure, what a lazy `ouro` loads) {min(alone_s):.3f} s, "
        f"{min(alone_s) / min(jq_s):.2f}x jq"
    )
    over = f"over {len(files)} files ({size:.1f} MB), whole process, best of {repeat}"
    rows = [
        [f"h_fleet: `ouro measure h-fleet --json` {over}", *against(min(ours_s), min(jq_s), "s", 3)],
        [
            f"h_fleet: the command's module alone (`ops.cli.measure`) {over}",
            *against(min(alone_s), min(jq_s), "s", 3),
        ],
    ]
    return min(ours_s) / min(jq_s), rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60, help="generated harness runs for (a)")
    parser.add_argument("--events", type=int, default=500, help="lines per generated run")
    parser.add_argument(
        "--hfleet-mb", type=float, default=64, help="megabytes of runs for (b): (a)'s and more"
    )
    parser.add_argument("--repeat", type=int, default=5, help="whole-process runs of each side in (b)")
    parser.add_argument("--seed", type=int, default=7)
    add_markdown_option(parser)
    options = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="ouro-bench-corpus-"))
    try:
        files = write_corpus(root / "runs", options.runs, options.events, options.seed)
        mined = mining(files)
        size = sum(path.stat().st_size for path in files)
        extra = math.ceil(max(0.0, options.hfleet_mb * 1e6 - size) / (size / len(files)))
        more = write_corpus(root / "more", extra, options.events, options.seed + 1) if extra else []
        ratio, compared = h_fleet(files + more, root, options.repeat)
        last = f"ratio ours/jq h_fleet: {ratio:.2f}"
        write_block(options.markdown, "corpus", ["measure", "ours", "jq", "ratio"], [*compared, *mined], last)
        print(last)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

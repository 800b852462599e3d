"""Labeler prefilter benchmark: the IDF prefilter against ``rg -F -f terms`` on the same files.

    .venv/bin/python benchmarks/prefilter.py [--mb 500] [--runs 20] [--repeat 3] [--seed 7]

A corpus of ``--mb`` megabytes is generated in a temporary folder (removed afterwards): ``--runs`` harness
runs, each an ``events.jsonl`` of CSF envelope lines around Claude Code stream-json (assistant tool calls,
tool results, results with usage), a few lines in a thousand carrying a ticket's rarer terms and most
carrying its common ones. The terms are ticket #44's of ``examples/forge`` (its fact lines' quoted
literals, snake_case names and flags, its predicate's backticked spans), as the labeler takes them.

Timed, best of ``--repeat`` (the two alternated) on a warm page cache: ``workers.labeler.prefilter`` over
every run (the block scan, the IDF scores, the interleaving, the 48 best candidates with their excerpts),
and ripgrep with every search form of those terms (``rg -F -f terms --no-filename -n``, output discarded).
Both must count the same matching lines, or the benchmark says so and stops. The last line is the ratio
ours/rg (target ≤ 3); without ``rg`` on the PATH it says so instead.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _markdown import add_markdown_option, write_block  # noqa: E402

from ouroboros_gates.forge import LocalForge  # noqa: E402  (after the path is set)
from ouroboros_gates.workers.labeler import Prefiltered, Source, Term, complete, prefilter, terms_of  # noqa: E402
from ouroboros_gates.workers.labeler.terms import search_forms  # noqa: E402

COMMANDS = [
    "ls -la",
    "git status",
    "pytest -q tests/unit",
    "cat README.md",
    "make lint",
    "npm test",
    "git diff",
]
_T = TypeVar("_T")
RARE = ['pkill -f \\"pytest -k slow\\"', "pgrep -f uvicorn", "Exit code 143"]


def _line(rng: random.Random, run: str, n: int) -> str:
    """One envelope line; about 3 in 1000 carry a rare term."""
    ts = f"2026-10-03T{8 + n // 360000 % 12:02d}:{n // 6000 % 60:02d}:{n // 100 % 60:02d}Z"
    command = rng.choice(RARE) if rng.random() < 0.003 else rng.choice(COMMANDS)
    if rng.random() < 0.5:
        event = {
            "type": "assistant",
            "message": {
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{n:012d}",
                        "name": "Bash",
                        "input": {"command": command},
                    }
                ],
                "usage": {
                    "input_tokens": rng.randint(1, 90),
                    "cache_read_input_tokens": rng.randint(0, 400000),
                },
            },
            "session_id": run,
        }
    else:
        content = "Exit code 143" if command == "Exit code 143" else "ok\n" + "x" * rng.randint(20, 300)
        event = {
            "type": "user",
            "message": {
                "content": [{"tool_use_id": f"toolu_{n:012d}", "type": "tool_result", "content": content}]
            },
            "session_id": run,
        }
    return json.dumps({"ts": ts, "event_type": event["type"], "event": event})


def generate(folder: Path, megabytes: int, runs: int, seed: int) -> list[Path]:
    """``runs`` run folders under ``folder`` holding ``megabytes`` MB of lines in all."""
    rng = random.Random(seed)
    per_run = megabytes * 1_000_000 // runs
    paths = []
    for index in range(runs):
        run = f"{index:08x}-0000-4000-8000-{seed:012x}"
        path = folder / run / "events.jsonl"
        path.parent.mkdir(parents=True)
        pool = [_line(rng, run, n) + "\n" for n in range(4096)]
        written, n = 0, 0
        with path.open("w", encoding="utf-8") as out:
            while written < per_run:
                chunk = "".join(rng.choice(pool) for _ in range(2048))
                out.write(chunk)
                written += len(chunk)
                n += 2048
        paths.append(path)
    return paths


def ticket_terms(cache: Path) -> list[Term]:
    """Ticket #44's terms, as the labeler takes them."""
    job = complete(None, LocalForge.from_examples(ROOT / "examples", cache).ticket(44))
    return list(terms_of(job.facts, job.predicate))


def _timed(repeat: int, run: Callable[[], _T]) -> tuple[float, _T]:
    """The best wall time of ``repeat`` calls, and the last call's result."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - started)
    return best, result


def main(argv: list[str] | None = None) -> None:
    """Generate, time both, print the figures and the ratio last."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=500, help="corpus size in MB")
    parser.add_argument("--runs", type=int, default=20, help="run files it is split into")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions, alternated (best kept)")
    parser.add_argument("--seed", type=int, default=7)
    add_markdown_option(parser)
    args = parser.parse_args(argv)
    rg = shutil.which("rg")
    with tempfile.TemporaryDirectory(prefix="ouro-prefilter-") as folder:
        base = Path(folder)
        terms = ticket_terms(base / "forge-cache")
        paths = generate(base / "runs", args.mb, args.runs, args.seed)
        size = sum(p.stat().st_size for p in paths)
        print(f"corpus: {len(paths)} runs, {size / 1e6:.0f} MB; terms: {', '.join(t.text for t in terms)}")
        sources = [Source(p.parent.name, str(p), path=p) for p in paths]
        if rg is None:
            ours_s, alone = _timed(args.repeat, lambda: prefilter(sources, terms, limit=48))
            print(f"ours: {alone.found} candidate lines of {alone.lines}, {ours_s:.2f} s")
            print("rg is not installed (ripgrep): no ratio")
            return
        patterns = base / "terms"
        patterns.write_bytes(b"".join(form + b"\n" for t in terms for form in search_forms(t.text)))
        command = [rg, "-F", "-f", str(patterns), "--no-filename", "-n", *map(str, paths)]
        ours_s, rg_s = float("inf"), float("inf")
        found: Prefiltered | None = None
        for _ in range(args.repeat):  # alternated, so both meet the same load on a shared machine
            took, found = _timed(1, lambda: prefilter(sources, terms, limit=48))
            ours_s = min(ours_s, took)
            rg_s = min(
                rg_s, _timed(1, lambda: subprocess.run(command, stdout=subprocess.DEVNULL, check=False))[0]
            )
        assert found is not None
        print(
            f"ours: {found.found} candidate lines of {found.lines}, {ours_s:.2f} s, "
            f"{size / 1e6 / ours_s:.0f} MB/s"
        )
        counted = subprocess.run(
            [rg, "-F", "-f", str(patterns), "-c", "--no-filename", *map(str, paths)],
            capture_output=True,
            text=True,
            check=False,
        )
        rg_lines = sum(int(n) for n in counted.stdout.split())
        print(f"rg -F -f terms: {rg_lines} matching lines, {rg_s:.2f} s, {size / 1e6 / rg_s:.0f} MB/s")
        if rg_lines != found.found:
            print(f"void: rg counts {rg_lines} lines, ours {found.found}")
            return
        last = f"ratio ours/rg prefilter: {ours_s / rg_s:.2f}"
        row = [
            f"{len(paths)} runs, {size / 1e6:.0f} MB, {found.found:,} matching lines",
            f"{ours_s:.2f} s",
            f"{rg_s:.2f} s",
            f"{ours_s / rg_s:.2f}x",
        ]
        write_block(args.markdown, "prefilter", ["corpus", "ours", "rg -F -f terms", "ratio"], [row], last)
        print(last)


if __name__ == "__main__":
    main()

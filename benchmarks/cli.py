"""``ouro``'s start-up as a user feels it: whole processes, the installed command, bytecode cached.

    .venv/bin/python benchmarks/cli.py [--runs 30]

Each command runs ``--runs`` times (after two warm-up runs), interleaved, and its wall times from spawn to
exit are reported as min / median / p95. The peer is the interpreter itself (``python -c pass`` with the same
interpreter and site-packages): what any Python command pays before its first import, and so the floor under
every row. Rows: ``ouro --help`` (the command table printed as it is: no command module, not even the
command-line library, is imported), a group's help (``ouro miner --help``, which imports that group's module
and typer's parameter machinery), ``ouro schema Probe`` (a command that needs the contract types), and ``ouro
corpus stats RUN --json`` on an example run (the readers and their counting, no model loaded).

The last line is ``ouro --help``'s median against the 150 ms target, with the interpreter's median beside it.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _markdown import add_markdown_option, write_block

BIN = Path(sys.executable).parent
OURO = BIN / "ouro"
RUN = sorted((Path(__file__).resolve().parents[1] / "examples" / "runs").glob("*/events.jsonl"))[0]


def _times(argv: list[str], runs: int) -> list[float]:
    found = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        found.append(time.perf_counter() - started)
    return found


def _row(name: str, seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"{name:<24} min {ordered[0] * 1000:6.1f} ms  median {statistics.median(ordered) * 1000:6.1f} ms"
        f"  p95 {p95 * 1000:6.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    add_markdown_option(parser)
    options = parser.parse_args()
    commands = {
        "python -c pass (peer)": [sys.executable, "-c", "pass"],
        "ouro --help": [str(OURO), "--help"],
        "ouro miner --help": [str(OURO), "miner", "--help"],
        "ouro schema Probe": [str(OURO), "schema", "Probe"],
        "ouro corpus stats": [str(OURO), "corpus", "stats", str(RUN), "--json"],
    }
    for argv in commands.values():  # warm-up: bytecode written, files in the page cache
        _times(argv, 2)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(options.runs):  # interleaved, so a busy moment weighs on every row alike
        for name, argv in commands.items():
            samples[name] += _times(argv, 1)
    for name, seconds in samples.items():
        print(_row(name, seconds))
    help_ms = statistics.median(samples["ouro --help"]) * 1000
    floor_ms = statistics.median(samples["python -c pass (peer)"]) * 1000
    last = (
        f"ouro --help median {help_ms:.0f} ms (target < 150 ms), interpreter alone {floor_ms:.0f} ms: "
        f"{help_ms / floor_ms:.2f}x the interpreter"
    )
    rows = [
        [
            f"`{name}`",
            f"{statistics.median(seconds) * 1000:.0f} ms",
            f"{floor_ms:.0f} ms",
            f"{statistics.median(seconds) * 1000 / floor_ms:.2f}x",
        ]
        for name, seconds in samples.items()
    ]
    write_block(
        options.markdown,
        "cli",
        ["command (whole process, median)", "time", "python -c pass", "ratio"],
        rows,
        last,
    )
    print(last)


if __name__ == "__main__":
    main()

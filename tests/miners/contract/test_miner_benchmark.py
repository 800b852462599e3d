"""The benchmark's miners workload runs, agrees with clingo on every verdict, and the last line
prints both ratios (tiny sizes: the figures are the benchmark's business, not a test's)."""

from __future__ import annotations

import re

import pytest
from benchmark_support import run_benchmark


def test_the_miners_workload_and_both_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    run_benchmark(
        "datalog",
        ["--nodes", "30", "--edges", "50", "--seed", "3", "--runs", "40", "--sizes", "", "--whole", ""],
    )
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"ratio ours/clingo closure: \d+\.\d\d, miners: \d+\.\d\d", lines[-1])
    assert any(
        line.startswith("miners: ") and " shipped, 40 generated runs each (seed 3)" in line for line in lines
    )
    row = next(line for line in lines if line.startswith("draft-pr-late"))
    assert row.split()[1] == "81"  # 40 runs x (gated, score) + the knee

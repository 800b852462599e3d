"""The benchmark's miners workload runs, agrees with clingo on every verdict, and the last line
prints both ratios (tiny sizes: the figures are the benchmark's business, not a test's)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "datalog.py"


def test_the_miners_workload_and_both_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("datalog_benchmark_miners", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        module.main(["--nodes", "30", "--edges", "50", "--seed", "3", "--runs", "40", "--sizes", ""])
    finally:
        del sys.modules[spec.name]
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"ratio ours/clingo closure: \d+\.\d\d, miners: \d+\.\d\d", lines[-1])
    assert any(line.startswith("miners: ") and " shipped, 40 generated runs each (seed 3)" in line for line in lines)
    row = next(line for line in lines if line.startswith("draft-pr-late"))
    assert row.split()[1] == "81"  # 40 runs x (gated, score) + the knee

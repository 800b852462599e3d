"""The benchmark still runs, agrees with clingo, and ends with its ratios (on a tiny graph and the
real programs' small size: the figures themselves are the benchmark's business, not a test's)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "datalog.py"


def test_the_benchmark_runs_and_prints_the_ratio_last(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("datalog_benchmark", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        options = ["--nodes", "40", "--edges", "70", "--seed", "3", "--repeat", "2", "--runs", "40", "--sizes", "small"]
        module.main(options)
    finally:
        del sys.modules[spec.name]
    lines = capsys.readouterr().out.splitlines()
    ratio = r"\d+\.\d\d"
    programs = f", points-to: {ratio}, same-generation: {ratio}, negation: {ratio}"
    assert re.fullmatch(f"ratio ours/clingo closure: {ratio}, miners: {ratio}{programs}", lines[-1])
    assert sum(line.startswith(("points-to small ", "negation small ")) for line in lines) == 2
    assert re.match(r"path facts: [1-9]\d* in both engines", lines[1])

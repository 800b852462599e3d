"""The benchmark still runs, agrees with clingo, and ends with its ratios (on a tiny graph and the
real programs' small size: the figures themselves are the benchmark's business, not a test's)."""

from __future__ import annotations

import re

import pytest
from benchmark_support import run_benchmark


def test_the_benchmark_runs_and_prints_the_ratio_last(capsys: pytest.CaptureFixture[str]) -> None:
    options = [
        "--nodes",
        "40",
        "--edges",
        "70",
        "--seed",
        "3",
        "--repeat",
        "2",
        "--runs",
        "40",
        "--sizes",
        "small",
        "--whole",
        "small",
    ]
    run_benchmark("datalog", options)
    lines = capsys.readouterr().out.splitlines()
    ratio = r"\d+\.\d\d"
    programs = f", points-to: {ratio}, same-generation: {ratio}, negation: {ratio}"
    whole = (
        f", whole points-to small: {ratio}, whole same-generation small: {ratio}, whole negation "
        f"small: {ratio}"
    )
    assert re.fullmatch(f"ratio ours/clingo closure: {ratio}, miners: {ratio}{programs}{whole}", lines[-1])
    assert sum(line.startswith(("ours points-to (pointsTo)", "clingo points-to ")) for line in lines) == 2
    assert any(line.startswith('explain pointsTo("') for line in lines)
    assert sum(line.startswith(("points-to small ", "negation small ")) for line in lines) == 2
    assert re.match(r"path facts: [1-9]\d* in both engines", lines[1])

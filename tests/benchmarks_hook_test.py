"""``benchmarks/hook.py`` runs end to end at tiny sizes and prints p50/p95 last (the figures themselves are
the benchmark's business, not a test's; it voids itself when a call is decided wrongly)."""

from __future__ import annotations

import re

import pytest
from benchmark_support import run_benchmark


@pytest.mark.slow
def test_hook_benchmark_grows_sessions_through_the_hook_and_prints_p95_last(capsys: pytest.CaptureFixture[str]) -> None:
    run_benchmark("hook", ["--sizes", "20,60", "--calls", "6", "--gap", "0.05"])
    lines = capsys.readouterr().out.splitlines()
    assert sum(bool(re.match(r"\s+\d+-event session \(\d+ lines, grown through the hook", line)) for line in lines) == 2
    assert sum("(1 denied)" in line for line in lines) == 2  # the sixth call of each is the pkill -f
    assert re.fullmatch(r"hook p50/p95: 20 events [\d.]+/[\d.]+ ms, 60 events [\d.]+/[\d.]+ ms", lines[-1])

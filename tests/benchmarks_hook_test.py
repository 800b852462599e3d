"""``benchmarks/hook.py`` runs end to end at tiny sizes and prints p50/p95 last (the figures themselves are
the benchmark's business, not a test's; it voids itself when a call is decided wrongly)."""

from __future__ import annotations

import re

import pytest
from benchmark_support import run_benchmark


@pytest.mark.slow
def test_hook_benchmark_grows_sessions_through_the_hook_and_prints_p95_last(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_benchmark(
        "hook", ["--sizes", "20,60", "--calls", "6", "--gap", "0.05", "--long-mb", "1", "--long-rounds", "2"]
    )
    lines = capsys.readouterr().out.splitlines()
    assert (
        sum(
            bool(re.match(r"\s+\d+-event session \(\d+ lines, grown through the hook", line))
            for line in lines
        )
        == 2
    )
    assert sum("(1 denied)" in line for line in lines) == 2  # the sixth call of each is the pkill -f
    assert any(re.match(r"1 MB command \(2 calls, every other one denied\)", line) for line in lines)
    assert re.fullmatch(
        r"hook p50/p95: 20 events [\d.]+/[\d.]+ ms, 60 events [\d.]+/[\d.]+ ms; 1 MB command \d+ ms "
        r"\([\d.]+x a small "
        r"one's\); words 2x/1x: split_words [\d.]+x, shlex [\d.]+x",
        lines[-1],
    )

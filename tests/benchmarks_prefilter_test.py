"""``benchmarks/prefilter.py`` runs end to end on a small corpus and prints its ratio last, or says that
ripgrep is missing (the figures themselves are the benchmark's business, not a test's)."""

from __future__ import annotations

import re
import shutil

import pytest
from benchmark_support import run_benchmark


def test_prefilter_benchmark_counts_the_same_lines_as_rg_and_prints_the_ratio_last(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_benchmark("prefilter", ["--mb", "2", "--runs", "2", "--repeat", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert re.match(r"corpus: 2 runs, \d+ MB; terms: pkill -f, pgrep -f, ", lines[0])
    assert re.match(r"ours: \d+ candidate lines of \d+, ", lines[1])
    if shutil.which("rg") is None:
        assert lines[-1] == "rg is not installed (ripgrep): no ratio"
        return
    ours = int(lines[1].split()[1])
    assert lines[2].startswith(f"rg -F -f terms: {ours} matching lines, ")
    assert re.fullmatch(r"ratio ours/rg prefilter: \d+\.\d\d", lines[-1])

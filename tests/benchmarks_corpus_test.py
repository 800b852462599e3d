"""``benchmarks/corpus.py`` runs end to end at tiny sizes and prints its figures, the ratio last (the
figures themselves are the benchmark's business, not a test's)."""

from __future__ import annotations

import re
import shutil

import pytest
from benchmark_support import run_benchmark


@pytest.mark.slow
def test_corpus_benchmark_prints_every_figure_and_the_ratio_last(capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed (.ci/run installs it)")
    run_benchmark("corpus", ["--runs", "4", "--events", "120", "--hfleet-mb", "0.2", "--repeat", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("(a) mining: 4 runs")
    assert any(re.match(r"    all \d+ miners .* events/s", line) for line in lines)
    assert any(
        re.match(r"\(b\) h_fleet over the same \d+ files \(0\.\d MB\), whole processes", line)
        for line in lines
    )
    assert re.fullmatch(r"ratio ours/jq h_fleet: \d+\.\d\d", lines[-1])

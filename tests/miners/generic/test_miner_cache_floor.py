"""CACHE-FLOOR: its miner test passes with the stated floor (no knee), it flags every sample run below
0.9867 and only those, the comparison is exact at the floor, and a clean run yields nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from generic_miner_support import EXAMPLES, REPO, findings, installed, passing, result, tool_use, write_run

from ouroboros_gates.miners import Miner, corpus_items, extract_facts
from ouroboros_gates.miners.cache_floor.extract import basis_points
from ouroboros_gates.schemas import Number

BELOW = {  # h_r in basis points, rounded down, of the sample runs below the floor
    "d2f0a8c6-7e3b-4c51-9b28-1a4e6d0f3c95": 875,  # the loop's run: its prompt opens with a timestamp
    "e1a6d3b8-5c94-4f27-8a0e-9d2b6f4c1a73": 9588,  # caches expired during 6-minute test runs
    "b5d8e3c1-4f6a-4b29-8d07-2e9c1a5f3b86": 9793,
    "7a2c5f9e-1d3b-4e8a-9c64-0f5b3e7d2a19": 9802,
    "3e7b1f5d-9c2a-4d84-a6f3-8b0e5d2c7a41": 9814,
    "9d41b7a3-0e5f-4a82-b6c9-3f7e1d2a5c60": 9821,
    "2f8c4d1e-6a3b-4c7d-9e21-5b0a7f3c8d14": 9833,
    "4b9f0e6c-8d27-4a13-b5e1-7c3f2a9d6b58": 9850,
}
CLEAR = "c7e2a9f4-3b18-4d6e-8f50-6a2d9b1e4c37"  # 9893


@pytest.fixture(scope="module")
def miner() -> Miner:
    return installed("cache_floor")


def test_the_miner_test_passes_with_the_stated_floor(miner: Miner) -> None:
    report = passing(miner)
    assert miner.name == "cache-floor" and miner.gate == "warn" and miner.scope.value == "generic"
    assert (
        report.backtest is not None and report.backtest.kappa_star is None and not report.backtest.candidates
    )
    assert report.backtest.counts.fn == () and report.backtest.counts.fp == ()
    assert report.mutation is not None and report.mutation.report.score == 1.0


def test_the_sample_corpus(miner: Miner) -> None:
    found = findings(miner, EXAMPLES, None)
    assert set(found) == set(BELOW)
    for run, ratio in BELOW.items():
        leaves = {leaf.predicate: leaf for leaf in found[run][0].proof}
        assert leaves["ratio"].args[1] == Number(number=ratio)
        assert leaves["floor"].args == (Number(number=9867),)
        assert leaves["floor"].span is not None and leaves["floor"].span.file.endswith(
            "miners/cache_floor/rules.dl"
        )


def test_a_clean_run_yields_nothing(miner: Miner, tmp_path: Path) -> None:
    run = "clean-run"
    # a cold assistant snapshot does not count; only the result lines do: 98670 / 100000 is the floor itself
    cold = {
        **tool_use(run, "toolu_0", "Bash", {"command": "ls"}),
        "message": {"usage": {"cache_creation_input_tokens": 9}},
    }
    events = [
        cold,
        result(
            run, {"input_tokens": 30, "cache_creation_input_tokens": 1300, "cache_read_input_tokens": 98670}
        ),
    ]
    path = write_run(tmp_path, run, events)
    facts = extract_facts(miner, corpus_items([str(path)])).facts[run]
    assert [f.args[1] for f in facts] == [Number(number=9867)]
    assert findings(miner, path, None) == {}
    assert findings(miner, REPO / "examples" / "runs" / CLEAR, None) == {}


def test_every_result_counts_and_a_run_without_one_has_no_ratio(miner: Miner, tmp_path: Path) -> None:
    reopened = write_run(
        tmp_path,
        "reopened",
        [
            result(
                "reopened",
                {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 990},
            ),
            result(
                "reopened",
                {"input_tokens": 0, "cache_creation_input_tokens": 1000, "cache_read_input_tokens": 0},
            ),
        ],
    )
    assert set(findings(miner, reopened, None)) == {"reopened"}  # 990 / 2000 over both processes
    silent = write_run(tmp_path, "silent", [tool_use("silent", "toolu_0", "Bash", {"command": "ls"})])
    assert extract_facts(miner, corpus_items([str(silent)])).facts["silent"] == ()


@pytest.mark.parametrize(
    ("read", "prompt", "expected"),
    [(601887, 610000, 9867), (601886, 610000, 9866), (98670, 100000, 9867), (98669, 100000, 9866), (0, 5, 0)],
)
def test_basis_points_round_down(read: int, prompt: int, expected: int) -> None:
    assert basis_points(read, prompt) == expected

"""REPEAT-FAILURE: its miner test passes with a knee fitted from the streak lengths, its recursive rule
flags the sample corpus's repeated failure at that knee with the whole streak as proof, and a clean
run yields nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from generic_miner_support import (
    EXAMPLES,
    REPO,
    findings,
    fitted_knee,
    installed,
    tool_result,
    tool_use,
    write_run,
)

from ouroboros_gates.miners import Miner, corpus_items, extract_facts
from ouroboros_gates.miners.repeat_failure.extract import digest
from ouroboros_gates.schemas import Number

REPEATED = "7a2c5f9e-1d3b-4e8a-9c64-0f5b3e7d2a19"  # the same failing pytest four times in a row


@pytest.fixture(scope="module")
def miner() -> Miner:
    return installed("repeat_failure")


@pytest.fixture(scope="module")
def kappa(miner: Miner) -> int:
    return fitted_knee(miner)


def test_the_miner_test_passes_with_a_fitted_knee(miner: Miner, kappa: int) -> None:
    assert miner.name == "repeat-failure" and miner.gate == "warn" and miner.scope.value == "generic"
    assert kappa == 2
    rules = miner.rules().program.rules
    assert any(literal.predicate == "streak" for literal in rules[2].body if hasattr(literal, "predicate"))


def test_the_sample_corpus_at_the_fitted_knee(miner: Miner, kappa: int) -> None:
    found = findings(miner, EXAMPLES, kappa)
    assert set(found) == {REPEATED}
    proof = found[REPEATED][0].proof
    called = sorted(leaf.span.line for leaf in proof if leaf.predicate == "called" and leaf.span)
    failed = sorted(leaf.span.line for leaf in proof if leaf.predicate == "failed" and leaf.span)
    assert called == [15, 17, 20] and failed == [16, 18, 21]  # three in a row cross κ* = 2
    assert set(findings(miner, EXAMPLES, 3)) == {REPEATED}
    assert findings(miner, EXAMPLES, 4) == {}  # the streak is four long


def test_a_clean_run_yields_nothing(miner: Miner, kappa: int, tmp_path: Path) -> None:
    run = "clean-run"
    events = []
    for n, (command, fails) in enumerate([("make test", True), ("make test", True), ("make test", False)]):
        events += [
            tool_use(run, f"toolu_{n}", "Bash", {"command": command}),
            tool_result(run, f"toolu_{n}", "x", fails),
        ]
    path = write_run(tmp_path, run, events)
    assert findings(miner, path, kappa) == {}
    assert findings(miner, REPO / "examples" / "runs" / "2f8c4d1e-6a3b-4c7d-9e21-5b0a7f3c8d14", kappa) == {}


def test_agents_streak_apart_and_labels_do_not_count(miner: Miner, tmp_path: Path) -> None:
    run = "agents"
    events = []
    for n, agent in enumerate([None, "toolu_task", None, "toolu_task", None]):
        call = tool_use(run, f"toolu_{n}", "Bash", {"command": "make lint", "description": f"try {n}"})
        answer = tool_result(run, f"toolu_{n}", "Exit code 2", True)
        events += [{**call, "parent_tool_use_id": agent}, {**answer, "parent_tool_use_id": agent}]
    path = write_run(tmp_path, run, events)
    facts = extract_facts(miner, corpus_items([str(path)])).facts[run]
    assert [f.args[1] for f in facts if f.predicate == "score"] == [
        Number(number=3)
    ]  # the main agent's three
    assert set(findings(miner, path, 2)) == {run}
    assert digest({"command": "make lint", "description": "a"}) == digest({"command": "make lint"})
    assert digest({"command": "make lint"}) != digest({"command": "make lint", "timeout": 5000})

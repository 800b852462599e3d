"""SLEEP-POLL: its miner test passes with a knee fitted from the poll counts, it flags the sample
corpus's polling runs at that knee, a clean run yields nothing, and loops and polls are read as the
shell reads them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from generic_miner_support import EXAMPLES, REPO, bash_calls, findings, fitted_knee, installed, write_run
from hypothesis import given, settings
from hypothesis import strategies as st

from ouroboros_gates.miners import Miner, corpus_items, extract_facts
from ouroboros_gates.miners.sleep_poll.extract import SLEEP_ONLY, _poll, sleeping_loop
from ouroboros_gates.schemas import Number

LOOP_RUN = "b5d8e3c1-4f6a-4b29-8d07-2e9c1a5f3b86"  # the sample corpus's sleep/poll run
PGREP_RUN = "3e7b1f5d-9c2a-4d84-a6f3-8b0e5d2c7a41"  # polls `pgrep -f …` four times after a sleep


@pytest.fixture(scope="module")
def miner() -> Miner:
    return installed("sleep_poll")


@pytest.fixture(scope="module")
def kappa(miner: Miner) -> int:
    return fitted_knee(miner)


def test_the_miner_test_passes_with_a_fitted_knee(miner: Miner, kappa: int) -> None:
    assert miner.name == "sleep-poll" and miner.gate == "warn" and miner.scope.value == "generic"
    assert kappa == 3


def test_the_sample_corpus_at_the_fitted_knee(miner: Miner, kappa: int) -> None:
    found = findings(miner, EXAMPLES, kappa)
    assert set(found) == {LOOP_RUN, PGREP_RUN}
    assert set(findings(miner, EXAMPLES, None)) == {LOOP_RUN}  # the loop needs no knee
    leaves = {leaf.predicate: leaf for f in found[PGREP_RUN] for leaf in f.proof}
    assert leaves["polled"].args[2] == Number(number=4) and leaves["polled"].span is not None
    assert leaves["polled"].span.line == 24  # the fourth `sleep 120; pgrep -f "pytest -k slow"`


def test_a_clean_run_yields_nothing(miner: Miner, kappa: int, tmp_path: Path) -> None:
    run = "clean-run"
    commands = [
        "gh run watch 18342210417 --exit-status",
        "sleep 5; gh run view 18342210417",  # one poll
        "for i in 1 2 3; do curl -sf localhost:8000 && break; sleep 2; done",  # bounded retry
        'git commit -m "replace the while true; do sleep 10; done loop"',  # quoted, never run
    ]
    path = write_run(tmp_path, run, bash_calls(run, commands))
    assert findings(miner, path, kappa) == {}
    assert findings(miner, REPO / "examples" / "runs" / "2f8c4d1e-6a3b-4c7d-9e21-5b0a7f3c8d14", kappa) == {}


def test_polls_count_one_command_whatever_the_sleep_and_a_lone_sleep_call_counts(
    miner: Miner, tmp_path: Path
) -> None:
    run = "polls"
    commands = [
        "sleep 30; gh pr checks 7",
        "sleep 90 && gh pr checks   7",
        "sleep 60",
        "gh pr checks 7",
        "sleep 1",
    ]
    path = write_run(tmp_path, run, bash_calls(run, commands))
    facts = extract_facts(miner, corpus_items([str(path)])).facts[run]
    polled = [
        (f.args[1].model_dump()["text"], f.args[2], f.span.line if f.span else 0)
        for f in facts
        if f.predicate == "polled"
    ]
    assert polled == [("gh pr checks 7", Number(number=n), line) for n, line in ((1, 1), (2, 2), (3, 4))]
    assert [f.args[1] for f in facts if f.predicate == "score"] == [Number(number=3)]


@pytest.mark.parametrize(
    ("command", "loops"),
    [
        ("while true; do gh run view 1 --json status; sleep 10; done", True),
        ("until curl -sf localhost:8000; do sleep 2; done", True),
        ("while sleep 5; do pgrep -x node || break; done", True),
        ("while :; do for i in 1 2; do sleep 1; done; done", True),  # the inner loop's sleep is the outer's
        ("for i in 1 2 3; do curl -sf localhost && break; sleep 2; done", False),
        ("while read f; do echo $f; done < list.txt", False),
        ('echo "while true; do sleep 1; done"', False),
    ],
)
def test_sleeping_loops(command: str, loops: bool) -> None:
    assert sleeping_loop(command) is loops


# The patterns before their runs of blanks were made possessive: the reference for what they match.
LAZY_THEN = re.compile(r"^\s*sleep\s+[0-9.]+[smhd]?\s*(?:;|&&|\n)\s*(?P<poll>\S.*?)\s*$", re.DOTALL)
LAZY_ONLY = re.compile(r"^\s*sleep\s+[0-9.]+[smhd]?\s*;?\s*$")
PIECES = [
    "sleep",
    " ",
    "\n",
    "\t",
    "\r",
    "\x0b",
    ";",
    "&&",
    "&",
    "1",
    "2.5",
    "s",
    "x",
    "echo hi",
    "\n;",
    " sleep 3",
]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join), st.booleans())
def test_polls_are_read_as_the_patterns_before_read_them(command: str, after_sleep: bool) -> None:
    found = LAZY_THEN.match(command)
    text = found.group("poll") if found else (command if after_sleep else None)
    assert _poll(command, after_sleep) == (" ".join(text.split()) if text else None)
    assert bool(SLEEP_ONLY.match(command)) == bool(LAZY_ONLY.match(command))


def test_long_runs_of_blanks_cost_what_reading_them_does(miner: Miner, tmp_path: Path) -> None:
    blanks = " " * (1 << 20)  # the patterns before took hours on these (40,000 blanks: 10 s)
    commands = [f"sleep 1{blanks}x", f"sleep 1; pgrep -f x{blanks}y", "sleep 5", f"pgrep -f x{blanks}"]
    path = write_run(tmp_path, "blanks", bash_calls("blanks", commands))
    facts = extract_facts(miner, corpus_items([str(path)])).facts["blanks"]
    assert [fact.predicate for fact in facts].count("polled") == 2

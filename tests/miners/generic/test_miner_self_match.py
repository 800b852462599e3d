"""SELF-MATCH: its miner test passes, it finds the sample corpus's self-matching calls (and only
those), a clean run yields nothing, and the pending call of a PreToolUse payload is denied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from generic_miner_support import EXAMPLES, REPO, bash_calls, findings, installed, passing, write_run

from ouroboros_gates.miners import Miner
from ouroboros_gates.miners.self_match.extract import Selection, selection
from ouroboros_gates.miners.shell import invocations

SAMPLE = "3e7b1f5d-9c2a-4d84-a6f3-8b0e5d2c7a41"


@pytest.fixture(scope="module")
def miner() -> Miner:
    return installed("self_match")


def test_the_miner_test_passes(miner: Miner) -> None:
    report = passing(miner)
    assert miner.name == "self-match" and miner.gate == "deny" and miner.scope.value == "generic"
    assert (
        report.backtest is not None and report.backtest.kappa_star is None
    )  # no knee: one call is the offense
    assert report.backtest.counts.fn == () and report.backtest.counts.tp
    assert report.mutation is not None and report.mutation.report.score == 1.0


def test_the_sample_corpus_has_five_self_matching_calls_in_one_run(miner: Miner) -> None:
    found = findings(miner, EXAMPLES, None)
    assert set(found) == {SAMPLE}
    lines = sorted(leaf.span.line for f in found[SAMPLE] for leaf in f.proof if leaf.span is not None)
    assert sorted(set(lines)) == [18, 20, 22, 24, 27]  # four `sleep N; pgrep -f …` and the `pkill -f …` (143)
    assert all([leaf.predicate for leaf in f.proof] == ["full_line", "own_line"] for f in found[SAMPLE])


def test_a_clean_run_yields_nothing(miner: Miner, tmp_path: Path) -> None:
    run = "clean-run"
    commands = [
        'pgrep -f "[p]ytest -k slow" || echo stopped',  # the bracket idiom
        "pkill -HUP gunicorn",  # by process name
        'pkill -A -f "pytest -k slow"',  # ignores its own shell
        'gh issue comment 44 --body "$(cat <<\'EOF\'\nrun `pkill -f "x"`\nEOF\n)"',  # text, never run
        'git commit -m "stop using pkill -f in the tests"',
    ]
    events = bash_calls(run, commands)
    path = write_run(tmp_path, run, events)
    assert findings(miner, path, None) == {}
    assert findings(miner, REPO / "examples" / "runs" / "2f8c4d1e-6a3b-4c7d-9e21-5b0a7f3c8d14", None) == {}


def test_the_pending_call_of_a_pre_tool_use_payload_is_denied(miner: Miner, tmp_path: Path) -> None:
    payload = {
        "session_id": "a1b2",
        "transcript_path": "/home/dev/.claude/projects/shop/a1b2.jsonl",
        "cwd": "/home/dev/shop",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": 'pkill -f "node server.js"; node server.js &', "description": "Restart"},
        "tool_use_id": "toolu_pending",
    }
    (tmp_path / "pending.json").write_text(json.dumps(payload), encoding="utf-8")
    found = findings(miner, tmp_path / "pending.json", None)
    assert [[arg.model_dump()["text"] for arg in f.subject] for f in found["pending"]] == [
        ["pending", "toolu_pending"]
    ]


@pytest.mark.parametrize(
    ("args", "pattern", "flags"),
    [
        (["-f", "pytest -k slow"], "pytest -k slow", {"f"}),
        (["-9", "-f", "x"], "x", {"f"}),
        (["-SIGTERM", "--full", "x"], "x", {"f"}),
        (["-A", "-f", "x"], "x", {"A", "f"}),  # -A is an option, not a signal
        (["-fA", "x"], "x", {"A", "f"}),
        (["-u", "root", "-f", "x"], "x", {"f"}),
        (["-fu1000", "x"], "x", {"f"}),
        (["--signal", "KILL", "-f", "x"], "x", {"f"}),
        (["-f", "--", "-k slow"], "-k slow", {"f"}),
        (["-l"], None, None),
    ],
)
def test_selector_options(args: list[str], pattern: str | None, flags: set[str] | None) -> None:
    chosen = selection(args)
    assert (chosen.pattern, set(chosen.flags)) == (pattern, flags) if chosen else pattern is None


def test_what_a_pattern_selects() -> None:
    line = 'sleep 45; pgrep -f "pytest -k slow"'
    assert Selection("pytest -k slow", frozenset("f")).selects(line)
    assert not Selection("[p]ytest -k slow", frozenset("f")).selects('pgrep -f "[p]ytest -k slow"')
    assert Selection("PYTEST", frozenset("fi")).selects(line)
    assert not Selection("pytest -k slow", frozenset("fx")).selects(line)  # -x: the whole line
    assert not Selection("pytest", frozenset("fv")).selects(line)  # -v: inverted
    assert Selection("slow (", frozenset("f")).selects("pgrep -f 'slow ('")  # not a regex: plain text


def test_the_programs_a_command_runs() -> None:
    assert [name for name, _args in invocations('echo "$(pgrep -f foo)"; bash -c "pkill -f bar"')] == [
        "echo",
        "pgrep",
        "bash",
        "pkill",
    ]
    assert [name for name, _ in invocations("timeout -s KILL 60 pkill -f x 2>&1 | head")] == ["pkill", "head"]
    assert [name for name, _ in invocations("cat <<EOF\npkill -f x\nEOF\necho done")] == ["cat", "echo"]
    assert invocations('echo "unclosed') == []

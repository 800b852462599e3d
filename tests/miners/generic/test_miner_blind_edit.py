"""BLIND-EDIT: its miner test passes; on the real Claude Code session it finds nothing (the agent read the
file after its one miss on it); it reads the result's text from every format that carries one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from generic_miner_support import EXAMPLES, findings, installed, passing, tool_result, tool_use, write_run

from ouroboros_gates.miners import Miner, corpus_items, extract_facts

SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
MISS = "<tool_use_error>String to replace not found in file.\nString: x = 1</tool_use_error>"


@pytest.fixture(scope="module")
def miner() -> Miner:
    return installed("blind_edit")


def test_the_miner_test_passes(miner: Miner) -> None:
    report = passing(miner)
    assert miner.name == "blind-edit" and miner.gate == "warn" and miner.scope.value == "generic"
    assert (
        report.backtest is not None and report.backtest.kappa_star is None
    )  # no knee: one retry is the offense
    assert report.backtest.counts.fn == () and len(report.backtest.counts.tp) == 1
    assert report.mutation is not None and report.mutation.report.score == 1.0


def test_the_real_session_misses_twice_but_reads_before_retrying(miner: Miner, shared_corpora: Path) -> None:
    project = shared_corpora / "agent_logs" / "claude_code_projects" / "marot_spotter"
    [item] = corpus_items([project])
    facts = [f for f in extract_facts(miner, [item]).facts[SESSION] if f.predicate == "missed"]
    assert [f.span.line for f in facts if f.span] == [259, 1300]  # the two `String to replace not found`
    assert findings(miner, project, None) == {}
    assert findings(miner, EXAMPLES, None) == {}


def test_a_blind_retry_in_stream_json_and_in_hook_payloads(miner: Miner, tmp_path: Path) -> None:
    edit = {"file_path": "/srv/app.py", "old_string": "x = 1", "new_string": "x = 2"}
    events = [
        tool_use("s1", "toolu_1", "Edit", edit),
        tool_result("s1", "toolu_1", MISS, is_error=True),
        tool_use("s1", "toolu_2", "Edit", edit),
        tool_result("s1", "toolu_2", MISS, is_error=True),
    ]
    found = findings(miner, write_run(tmp_path / "stream", "blind", events), None)
    assert [[arg.model_dump()["text"] for arg in f.subject] for f in found["blind"]] == [["blind", "toolu_2"]]
    hooks = tmp_path / "hooks.jsonl"
    common = {
        "session_id": "h1",
        "transcript_path": "/t.jsonl",
        "cwd": "/srv",
        "tool_name": "Edit",
        "tool_input": edit,
    }
    lines = [
        {**common, "hook_event_name": "PreToolUse", "tool_use_id": "toolu_a"},
        {**common, "hook_event_name": "PostToolUseFailure", "tool_use_id": "toolu_a", "error": MISS},
        {**common, "hook_event_name": "PreToolUse", "tool_use_id": "toolu_b"},
        {**common, "hook_event_name": "PostToolUseFailure", "tool_use_id": "toolu_b", "error": MISS},
    ]
    hooks.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert list(findings(miner, hooks, None)) == ["hooks"]
    other = [{**line, "error": "Exit code 1"} if "error" in line else line for line in lines]
    hooks.write_text("".join(json.dumps(line) + "\n" for line in other))  # failures, but not this one
    assert findings(miner, hooks, None) == {}

"""Claude Code hook payloads: one payload, a JSON array, or JSON lines; calls paired with results."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ouroboros_gates.harness import Format, collect, detect_format, is_tool_error, pair_tool_uses, read
from ouroboros_gates.harness.hooks import is_turn_end
from ouroboros_gates.schemas import HarnessKind


def test_hook_lines_typed_by_event(fixtures: Path) -> None:
    events = list(read(fixtures / "hooks_session.jsonl"))
    assert [(e.kind.value, e.subtype, e.tool, e.is_error) for e in events] == [
        ("hook", "SessionStart", None, False),
        ("hook", "UserPromptSubmit", None, False),
        ("tool_call", "PreToolUse", "Bash", False),
        ("tool_result", "PostToolUseFailure", "Bash", True),
        ("tool_call", "PreToolUse", "Read", False),
        ("tool_result", "PostToolUse", "Read", False),
        ("tool_call", "PreToolUse", "Edit", False),
        ("hook", "Stop", None, False),
        ("hook", "Stop", None, False),
        ("hook", "SubagentStop", None, False),
        ("hook", "SessionEnd", None, False),
    ]
    assert [e.span.line for e in events] == list(range(1, 12))
    assert events[5].raw["effort"] == "medium" and events[5].raw["duration_ms"] == 12  # unknown fields kept
    assert events[9].agent == "ag9"
    # Stop with stop_hook_active is the same turn stopping again: one turn, not two.
    assert [e.span.line for e in events if is_turn_end(e)] == [8]


def test_hooks_pair_by_tool_use_id(fixtures: Path) -> None:
    uses = pair_tool_uses(read(fixtures / "hooks_session.jsonl"))
    assert [(u.tool, u.call is not None, len(u.results), u.is_error) for u in uses] == [
        ("Bash", True, 1, True),
        ("Read", True, 1, False),
        ("Edit", True, 0, False),  # never answered (the log ends)
    ]
    stats = collect([fixtures / "hooks_session.jsonl"]).runs[0]
    assert (stats.tool_calls, stats.tool_errors, stats.turns) == (
        {"Bash": 1, "Edit": 1, "Read": 1},
        {"Bash": 1},
        1,
    )


def test_old_payloads_without_ids_pair_by_input(fixtures: Path) -> None:
    reader = read(fixtures / "hooks_array.json")
    uses = pair_tool_uses(reader)
    assert [(u.tool, u.call.tool_input if u.call else None, len(u.results)) for u in uses] == [
        ("Grep", {"pattern": "TODO"}, 0),
        (
            "Grep",
            {"pattern": "FIXME"},
            1,
        ),  # the Post answers the call with the same input, not the first Grep
        ("Bash", {"command": "make"}, 0),
    ]
    assert [u.call.span.line for u in uses if u.call] == [2, 12, 37]
    assert reader.malformed == []


def test_a_single_pretty_payload(fixtures: Path) -> None:
    (event,) = read(fixtures / "hook_single.json")
    assert (event.kind, event.tool, event.tool_use_id, event.span.line) == (
        HarnessKind.TOOL_CALL,
        "Bash",
        "toolu_H1",
        1,
    )
    assert detect_format(fixtures / "hook_single.json") is Format.HOOK


def test_results_read_before_their_calls_still_pair(tmp_path: Path) -> None:
    common = {"session_id": "s", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    (tmp_path / "a_post.json").write_text(json.dumps([{**common, "hook_event_name": "PostToolUse"}]))
    (tmp_path / "b_pre.json").write_text(json.dumps([{**common, "hook_event_name": "PreToolUse"}]))
    uses = pair_tool_uses(read(tmp_path))
    assert len(uses) == 1 and uses[0].call is not None and len(uses[0].results) == 1


# --- real captures, read in place; expected numbers from the file names and plain json.load -------------


def test_deno_captures_one_payload_per_file(agent_logs: Path) -> None:
    folder = agent_logs / "claude_code_hooks" / "chrisbarrett_deno-claude-code-hook"
    files = sorted(folder.glob("*.json"))
    assert len(files) == 32
    for path in files:
        reader = read(path)
        events = list(reader)
        payload = json.loads(path.read_text())
        hook, _, tool = path.stem.partition(".")
        assert len(events) == 1 and reader.malformed == [], path.name
        (event,) = events
        assert event.subtype == hook == payload["hook_event_name"]
        assert event.raw == payload  # every field kept, known or not
        assert event.tool == (tool or None)
        expected = {"PreToolUse": HarnessKind.TOOL_CALL, "PostToolUse": HarnessKind.TOOL_RESULT}
        assert event.kind is expected.get(hook, HarnessKind.HOOK)
        assert not is_tool_error(event)  # PostToolUse fires only on success
        assert reader.lines == path.read_text().count("\n") + (not path.read_text().endswith("\n"))
    stats = collect([folder]).runs[0]
    tools = {p.stem.split(".")[1] for p in files if p.stem.startswith("PreToolUse.")}
    assert stats.tool_calls == dict.fromkeys(sorted(tools), 1)
    assert stats.tool_errors == {} and stats.turns == 1  # Stop.json has stop_hook_active false


def test_quantstats_session_pairs_14_of_20_calls(agent_logs: Path) -> None:
    folder = agent_logs / "claude_code_hooks" / "ranaroussi_quantstats"
    pre = json.loads((folder / "pre_tool_use.json").read_text())
    post = json.loads((folder / "post_tool_use.json").read_text())
    stats = collect([folder]).runs[0]
    assert stats.tool_calls == dict(sorted(Counter(p["tool_name"] for p in pre).items()))
    assert sum(stats.tool_calls.values()) == len(pre) == 20 and len(post) == 14
    assert stats.tool_errors == {} and len(stats.sessions) == 1 and stats.malformed == []
    uses = pair_tool_uses(read(folder))
    # Independent: a Post answers a Pre with the same tool and input (a multiset intersection).
    key = lambda p: (p["tool_name"], json.dumps(p["tool_input"], sort_keys=True))  # noqa: E731
    answered = sum((Counter(map(key, pre)) & Counter(map(key, post))).values())
    assert answered == 14
    assert sum(1 for u in uses if u.call and u.results) == answered
    assert sum(1 for u in uses if u.call and not u.results) == 20 - answered
    assert all(u.call is not None for u in uses)


@pytest.mark.parametrize("name", ["pre_tool_use.json", "post_tool_use.json"])
def test_quantstats_spans_point_at_each_payload(agent_logs: Path, name: str) -> None:
    path = agent_logs / "claude_code_hooks" / "ranaroussi_quantstats" / name
    starts = [n for n, line in enumerate(path.read_text().splitlines(), start=1) if line == "  {"]
    assert [e.span.line for e in read(path)] == starts

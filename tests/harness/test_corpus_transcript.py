"""Claude Code transcripts: usage once per API response, REDACTED ids never merged, subagent work read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ouroboros_gates.harness import Format, detect_format, read, summarise
from ouroboros_gates.harness.corpus_stats import collect
from ouroboros_gates.schemas import HarnessKind, Usage

Jq = Callable[..., list[Any]]


def _usage_sum(path: Path) -> Usage:
    total = Usage()
    for event in read(path):
        if event.usage is not None:
            total = total + event.usage
    return total


def test_one_response_split_over_lines_counts_its_usage_once(fixtures: Path) -> None:
    path = fixtures / "transcript_session.jsonl"
    # msg_A spans lines 3-5 (the last one reports 95 output tokens), msg_B is line 9.
    assert _usage_sum(path) == Usage(
        input_tokens=3 + 1,
        cache_creation_input_tokens=1200 + 300,
        cache_read_input_tokens=9000 + 10200,
        output_tokens=95 + 40,
    )


def test_transcript_events_calls_results_and_spans(fixtures: Path) -> None:
    path = fixtures / "transcript_session.jsonl"
    reader = read(path)
    events = list(reader)
    calls = [e for e in events if e.kind is HarnessKind.TOOL_CALL]
    results = [e for e in events if e.kind is HarnessKind.TOOL_RESULT]
    assert [(e.tool, e.tool_use_id, e.span.line) for e in calls] == [
        ("Bash", "toolu_T1", 4),
        ("Read", "toolu_T2", 5),
    ]
    assert calls[0].tool_input == {"command": "pytest -q", "description": "Run tests"}
    # A result names its tool from the call it answers.
    assert [(e.tool, e.is_error, e.span.line) for e in results] == [("Bash", True, 6), ("Read", False, 7)]
    assert {e.session for e in events if e.session} == {"5f0c9a52-1111-4c3e-9d0a-6c0b7e2a9a01"}
    assert calls[0].timestamp == datetime(2026, 3, 2, 9, 0, 3, 500000, tzinfo=UTC)
    others = Counter(e.subtype for e in events if e.kind is HarnessKind.OTHER)
    assert others == {"file-history-snapshot": 1, "hook_progress": 1, "summary": 1}
    # Line 12 has no newline and is not JSON yet: a session still being written, left for the next read.
    assert reader.malformed == [] and reader.pending == [
        f"{path}:12: last line not finished (no newline at the end, not JSON yet): left for the next read"
    ]
    summary = summarise(read(path))
    assert (summary.lines, summary.malformed, summary.tool_calls, summary.tool_errors) == (11, 0, 2, 1)
    assert summary.started_at == datetime(2026, 3, 2, 9, 0, 1, tzinfo=UTC)
    assert summary.ended_at == datetime(2026, 3, 2, 9, 0, 12, 100000, tzinfo=UTC)


def test_redacted_ids_are_never_merged(fixtures: Path) -> None:
    # Two different responses both redacted to REDACTED, then msg_C split over two lines.
    assert _usage_sum(fixtures / "transcript_redacted.jsonl") == Usage(
        input_tokens=2 + 4 + 1,
        cache_creation_input_tokens=500 + 600 + 100,
        cache_read_input_tokens=7000 + 7500 + 8000,
        output_tokens=30 + 12 + 20,
    )


def test_subagent_work_is_read_and_named(fixtures: Path) -> None:
    events = list(read(fixtures / "transcript_sidechain.jsonl"))
    calls = {e.tool_use_id: e for e in events if e.kind is HarnessKind.TOOL_CALL}
    assert {k: (e.tool, e.agent) for k, e in calls.items()} == {
        "toolu_TASK": ("Task", None),
        "toolu_S1": ("Grep", "ag1"),  # relayed in a progress line
        "toolu_X1": ("Glob", "ag2"),  # a sidechain line
    }
    errors = [e for e in events if e.kind is HarnessKind.TOOL_RESULT and e.is_error]
    assert [(e.tool, e.agent, e.span.line) for e in errors] == [("Grep", "ag1", 3)]
    # The subagent's responses count too (msg_S1, msg_X1), once each.
    assert _usage_sum(fixtures / "transcript_sidechain.jsonl") == Usage(
        input_tokens=10, cache_creation_input_tokens=600, cache_read_input_tokens=10500, output_tokens=73
    )
    stats = collect([fixtures / "transcript_sidechain.jsonl"]).runs[0]
    assert stats.subagent_tool_calls == 2 and stats.tool_errors == {"Grep": 1}


# --- the real transcripts (marot/spotter), read in place and checked against jq ------------------------

# jq finds every tool_use / tool_result object anywhere in the file (top level or relayed), and groups
# assistant usage by "message.id requestId" taking each field's maximum: a different method from the reader's.
CALLS = '[.. | objects | select(.type == "tool_use") | .id] | unique | length'
ERRORS = (
    '[.. | objects | select(.type == "tool_result" and .is_error == true) | .tool_use_id] | unique | length'
)
USAGE = """
[.. | objects | select(.type == "assistant" and .message.usage? != null)
  | {k: "\\(.message.id) \\(.requestId)", u: .message.usage}]
| group_by(.k)
| map(.[0].k as $k | {i: (map(.u.input_tokens) | max), w: (map(.u.cache_creation_input_tokens) | max),
                     r: (map(.u.cache_read_input_tokens) | max), o: (map(.u.output_tokens) | max)})
| {input_tokens: (map(.i) | add), cache_creation_input_tokens: (map(.w) | add),
   cache_read_input_tokens: (map(.r) | add), output_tokens: (map(.o) | add)}
"""
NAMES = '[.. | objects | select(.type == "tool_use") | {id, name}] | unique | map(.name)'


@pytest.mark.parametrize("name", ["short", "tool_heavy", "subagent"])
def test_real_transcript_counts_match_jq(agent_logs: Path, jq: Jq, name: str) -> None:
    path = agent_logs / "claude_code_transcripts" / f"{name}.jsonl"
    stats = collect([path]).runs[0]
    assert sum(stats.tool_calls.values()) == jq(CALLS, path, slurp=True)[0]
    assert sum(stats.tool_errors.values()) == jq(ERRORS, path, slurp=True)[0]
    assert stats.tool_calls == dict(sorted(Counter(jq(NAMES, path, slurp=True)[0]).items()))
    assert stats.usage.as_dict() == jq(USAGE, path, slurp=True)[0]
    assert stats.lines == len(path.read_bytes().splitlines()) and stats.malformed == []
    assert len(stats.sessions) == 1 and detect_format(path) is Format.TRANSCRIPT


def test_real_transcript_numbers(agent_logs: Path) -> None:
    """The figures themselves, so a change in the captures or the reader shows up by name."""
    found = {}
    for name in ("short", "tool_heavy", "subagent"):
        run = collect([agent_logs / "claude_code_transcripts" / f"{name}.jsonl"]).runs[0]
        found[name] = (
            sum(run.tool_calls.values()),
            sum(run.tool_errors.values()),
            run.subagent_tool_calls,
            run.usage.input_tokens,
            run.usage.cache_creation_input_tokens,
            run.usage.cache_read_input_tokens,
            run.usage.output_tokens,
        )
    assert found == {
        "short": (2, 2, 0, 3, 13835, 11515, 13),  # both calls refused by the user: is_error results
        "tool_heavy": (6, 0, 0, 54, 17696, 88231, 212),
        "subagent": (
            25,
            3,
            9,
            1600,
            40127,
            522629,
            1593,
        ),  # 16 main calls + 9 by the Plan subagent (3 failed)
    }


def test_real_subagent_errors_are_the_subagents(agent_logs: Path) -> None:
    path = agent_logs / "claude_code_transcripts" / "subagent.jsonl"
    errors = [e for e in read(path) if e.kind is HarnessKind.TOOL_RESULT and e.is_error]
    assert len(errors) == 3 and all(e.agent == "afb92ff" for e in errors)
    assert Counter(e.tool for e in errors) == {"Read": 2, "Bash": 1}

"""stream-json, bare or in the CSF envelope: result usage is authoritative, cost is folded per session."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ouroboros_gates.harness import (
    Format,
    collect,
    detect_format,
    fold_cumulative,
    pair_tool_uses,
    read,
    summarise,
)
from ouroboros_gates.schemas import HarnessKind, Usage

Jq = Callable[..., list[Any]]
ROOT = Path(__file__).resolve().parents[2]


def test_a_reopened_process_restarts_the_cost_counter(fixtures: Path) -> None:
    summary = summarise(read(fixtures / "stream_restart.ndjson"))
    assert summary.cost_usd == pytest.approx(0.4 + 0.15)  # 0.25 -> 0.4, reopened: 0.1 -> 0.15
    assert summary.usage == Usage(
        input_tokens=20 + 5 + 30 + 2,
        cache_creation_input_tokens=3000 + 200 + 5000,
        cache_read_input_tokens=15000 + 18000 + 5100,
        output_tokens=300 + 80 + 120 + 40,
    )
    # toolu_R1 is refused twice over (an is_error result and a permission denial): one error.
    assert (summary.tool_calls, summary.tool_errors) == (3, 2)


def test_a_denial_is_an_error_result_joined_to_its_call(fixtures: Path) -> None:
    events = list(read(fixtures / "stream_restart.ndjson"))
    denials = [e for e in events if e.subtype == "permission_denial"]
    assert [(d.kind, d.tool, d.tool_use_id, d.is_error, d.span.line) for d in denials] == [
        (HarnessKind.TOOL_RESULT, "Bash", "toolu_R1", True, 6)
    ]
    (bash,) = [u for u in pair_tool_uses(events) if u.call and u.call.tool_use_id == "toolu_R1"]
    assert len(bash.results) == 2 and bash.is_error
    result_lines = [e for e in events if e.kind is HarnessKind.RESULT]
    assert [(e.subtype, e.is_error) for e in result_lines][2] == ("error_during_execution", True)
    assert all(e.usage is None for e in events if e.kind is HarnessKind.ASSISTANT)  # partial snapshots


def test_interleaved_sessions_are_folded_apart(fixtures: Path) -> None:
    reader = read(fixtures / "stream_interleaved.ndjson")
    summary = summarise(reader)
    costs = [e.total_cost_usd for e in read(fixtures / "stream_interleaved.ndjson") if e.total_cost_usd]
    assert costs == [0.1, 0.05, 0.2, 0.07]
    assert fold_cumulative(costs) == pytest.approx(0.37)  # one counter would see two restarts
    assert summary.cost_usd == pytest.approx(0.2 + 0.07)  # two sessions, two counters
    assert len(collect([fixtures / "stream_interleaved.ndjson"]).runs[0].sessions) == 2


def test_envelope_lines_malformed_lines_and_a_bare_line(fixtures: Path) -> None:
    reader = read(fixtures / "envelope_run")
    events = list(reader)
    assert reader.run == "envelope_run" and reader.lines == 9  # line 10 is still being written
    assert [(m.span.line, m.reason.split(" (")[0]) for m in reader.malformed] == [(8, "not UTF-8")]
    assert [note.split(": ")[0] for note in reader.pending] == [
        f"{fixtures / 'envelope_run' / 'events.jsonl'}:10"
    ]
    calls = [e for e in events if e.kind is HarnessKind.TOOL_CALL]
    assert [(e.tool, e.agent) for e in calls] == [("Task", None), ("Bash", "toolu_E1")]  # parent_tool_use_id
    (result,) = [e for e in events if e.kind is HarnessKind.RESULT]
    assert result.span.line == 6 and result.total_cost_usd == 0.3  # its type came from event_type
    assert result.timestamp is not None and result.timestamp.isoformat() == "2026-03-05T12:00:11+00:00"
    assert result.raw["event_type"] == "result"  # the whole envelope is kept
    assert {e.span.line for e in events} == {1, 2, 3, 4, 5, 6, 7, 9}
    assert detect_format(fixtures / "envelope_run" / "events.jsonl") is Format.MIXED  # line 7 is bare


def test_every_format_in_one_file_line_by_line(fixtures: Path) -> None:
    reader = read(fixtures / "mixed_formats.jsonl")
    by_line = {}
    for event in reader:
        by_line.setdefault(event.span.line, event.kind.value)
    assert by_line == {1: "system", 2: "result", 3: "tool_call", 4: "user", 5: "other", 9: "hook"}
    assert [m.span.line for m in reader.malformed] == [6, 7]
    assert reader.formats == {
        Format.ENVELOPE: 1,
        Format.STREAM_JSON: 1,
        Format.HOOK: 3,
        Format.TRANSCRIPT: 1,
        Format.UNKNOWN: 1,
    }


# --- real captures (charlieyou/claude-agent-sdk-gleam), read in place ----------------------------------


def test_golden_stream_result_is_authoritative(agent_logs: Path, jq: Jq) -> None:
    path = (
        agent_logs
        / "claude_code_stream_json"
        / "charlieyou_claude-agent-sdk-gleam"
        / "golden"
        / "basic_query.ndjson"
    )
    summary = summarise(read(path))
    assert summary.cost_usd == 0.1354875  # as the capture's README states
    (usage,) = jq('select(.type == "result") | .usage', path)
    assert summary.usage == Usage(**{k: usage[k] for k in Usage.model_fields if k != "schema_version"})
    assert summary.usage.output_tokens == 25  # not 5 + 25: the assistant line's snapshot is not added
    assert (summary.lines, summary.malformed, summary.tool_calls) == (3, 0, 0)
    assert detect_format(path) is Format.STREAM_JSON


def test_single_stream_messages(agent_logs: Path, jq: Jq) -> None:
    folder = agent_logs / "claude_code_stream_json" / "charlieyou_claude-agent-sdk-gleam"
    files = sorted(folder.glob("*.json"))
    stats = collect([folder]).runs[0]
    expected_calls = jq(
        '[.. | objects | select(.type == "tool_use") | .id] | unique | length', *files, slurp=True
    )[0]
    assert sum(stats.tool_calls.values()) == expected_calls == 3
    assert stats.tool_errors == {} and stats.malformed == []
    costs = jq('select(.type == "result") | .total_cost_usd', *files)
    assert stats.cost_usd == pytest.approx(sum(costs))  # one result per file, each file its own process
    # user_message.json answers the call in assistant_message.json.
    events = list(read(folder))
    paired = [u for u in pair_tool_uses(events) if u.call and u.results]
    assert [
        (u.call.span.file.rsplit("/", 1)[1], u.results[0].span.file.rsplit("/", 1)[1]) for u in paired
    ] == [("assistant_message.json", "user_message.json")]
    kinds = {e.span.file.rsplit("/", 1)[1]: e.kind.value for e in events if e.span.line == 1}
    assert kinds["system_message.json"] == "system" and kinds["result_error.json"] == "result"
    assert kinds["permission_denial.json"] == kinds["usage_stats.json"] == "other"  # fragments, kept


# --- the example corpus (our harness's envelope), against a plain reading ------------------------------


def _plain(path: Path) -> tuple[int, int, float, int]:
    """Counts by reading the JSON directly: processes split at each system/init line."""
    calls, failed, processes, output = set(), set(), [], 0
    for text in path.read_text().splitlines():
        event = json.loads(text)["event"]
        if event["type"] == "system" and event.get("subtype") == "init":
            processes.append(0.0)
        for block in (
            event.get("message", {}).get("content", []) if isinstance(event.get("message"), dict) else []
        ):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                calls.add(block["id"])
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error"):
                failed.add(block["tool_use_id"])
        if event["type"] == "result":
            processes[-1] = event["total_cost_usd"]
            output += event["usage"]["output_tokens"]
            failed |= {d["tool_use_id"] for d in event["permission_denials"]}
    return len(calls), len(failed), sum(processes), output


EXAMPLE_RUNS = ROOT / "examples" / "runs"


@pytest.mark.parametrize(
    "run", sorted(p.name for p in EXAMPLE_RUNS.iterdir()) if EXAMPLE_RUNS.is_dir() else []
)
def test_example_runs_match_a_plain_reading(run: str) -> None:
    path = EXAMPLE_RUNS / run / "events.jsonl"
    summary = summarise(read(path.parent))
    calls, errors, cost, output = _plain(path)
    assert (summary.tool_calls, summary.tool_errors, summary.usage.output_tokens) == (calls, errors, output)
    assert summary.cost_usd == pytest.approx(cost)
    assert summary.malformed == 0 and summary.run == run

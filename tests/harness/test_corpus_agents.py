"""Other agents' logs (our own small captures in their shapes, ``agents/``): SWE-agent trajectories and
OpenHands event lists become runs with tool calls, errors, usage and cost; a file of no known format is named
with what it held and what was expected, and ``ouro corpus stats`` then exits 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ouroboros_gates.harness import collect, expand, read, summarise
from ouroboros_gates.ops.cli.corpus import app
from ouroboros_gates.schemas import HarnessKind

AGENTS = Path(__file__).resolve().parent / "agents"


def test_a_trajectory_is_a_run_of_its_steps() -> None:
    [run] = collect([AGENTS / "fix-greeting.traj"]).runs
    assert (run.agent, run.format) == ("swe-agent", "swe-agent")
    assert run.tool_calls == {"Bash": 5} and run.tool_errors == {"Bash": 2}  # a traceback, a refused edit
    assert (run.usage.input_tokens, run.usage.output_tokens, run.cost_usd) == (
        9000,
        300,
        0.0421,
    )  # instance_cost
    assert run.cache is None  # SWE-agent reports no cache counts: h_r unknown, not 0
    events = list(read(AGENTS / "fix-greeting.traj"))
    calls = [event for event in events if event.kind is HarnessKind.TOOL_CALL]
    text = (AGENTS / "fix-greeting.traj").read_text().splitlines()
    opened = [n for n, line in enumerate(text, start=1) if line == "    {"]  # the steps', then the history's
    assert [event.span.line for event in calls] == opened[:5]
    assert calls[3].tool_input == {
        "command": "sleep 5; pgrep -f 'python src/greet.py'"
    }  # what the shell miners read
    summary = summarise(read(AGENTS / "fix-greeting.traj"))
    assert (summary.tool_calls, summary.tool_errors, summary.cache_reported) == (5, 2, False)


def test_a_history_of_function_calls_is_read_when_there_are_no_steps() -> None:
    [run] = collect([AGENTS / "history-only.traj"]).runs
    assert run.tool_calls == {"Bash": 1, "open": 1} and run.tool_errors == {"open": 1}  # "Usage: open …"
    events = [event for event in read(AGENTS / "history-only.traj") if event.kind is HarnessKind.TOOL_CALL]
    assert [(e.tool_use_id, e.tool_input) for e in events] == [
        ("call_A1", {"path": "tests/test_a.py", "line": "x"}),
        ("call_A2", {"command": "pytest -q"}),
    ]


def test_a_history_call_that_is_not_an_object_names_no_call(tmp_path: Path) -> None:
    doc = json.loads((AGENTS / "history-only.traj").read_text())
    for message in doc["history"]:
        if message.get("tool_calls"):
            message["tool_calls"].insert(0, "oops")
    garbled = tmp_path / "garbled.traj"
    garbled.write_text(json.dumps(doc))
    events = [event for event in read(garbled) if event.kind is HarnessKind.TOOL_CALL]
    assert [e.tool_use_id for e in events] == ["call_A1", "call_A2"]


def test_an_openhands_event_list_is_a_run_with_usage_once_per_response() -> None:
    [run] = collect([AGENTS / "openhands-trajectory.json"]).runs
    assert (run.agent, run.format) == ("openhands", "openhands")
    assert run.tool_calls == {"execute_bash": 2, "str_replace_editor": 1}
    assert run.tool_errors == {
        "execute_bash": 1,
        "str_replace_editor": 1,
    }  # exit code 1; an error observation
    # Three responses, each listed again by every later event: counted once each; prompt includes the cache.
    assert run.usage.as_dict() == {
        "input_tokens": 1000 + 1100 + 1200,
        "output_tokens": 260,
        "cache_creation_input_tokens": 4800,
        "cache_read_input_tokens": 8500,
    }
    assert run.cost_usd == 0.046  # accumulated_cost: a cumulative counter, folded
    assert run.cache == pytest.approx(8500 / (3300 + 4800 + 8500))
    assert (run.started_at.isoformat(), run.ended_at.isoformat()) == (  # type: ignore[union-attr]
        "2025-05-20T10:00:00+00:00",
        "2025-05-20T10:00:40+00:00",
    )


def test_each_whole_run_file_is_its_own_run_and_an_unknown_file_is_named() -> None:
    runs = {run.name: run.files for run in expand([AGENTS])}
    assert runs == {
        "fix-greeting": (AGENTS / "fix-greeting.traj",),
        "history-only": (AGENTS / "history-only.traj",),
        "openhands-trajectory": (AGENTS / "openhands-trajectory.json",),
        "agents": (AGENTS / "notes.json",),
    }
    result = CliRunner().invoke(app, ["stats", str(AGENTS)])
    assert result.exit_code == 1
    assert result.stderr == (
        f"ouro: {AGENTS / 'notes.json'}: not read: no object in a known format (its first has items, title); "
        "expected CSF envelope lines, Claude Code stream-json, a Claude Code transcript or hook payloads "
        "(JSON lines "
        "or JSON), a SWE-agent trajectory (.traj) or OpenHands events\n"
    )
    assert "fix-greeting\tswe-agent\tswe-agent\t75\t0\t1\t5\t2\t9000\t0\t0\t300\t-\t0.0421" in result.stdout
    known = CliRunner().invoke(app, ["stats", str(AGENTS / "fix-greeting.traj")])
    assert known.exit_code == 0


def test_sessions_lists_start_end_agent_and_counts() -> None:
    result = CliRunner().invoke(app, ["sessions", "--json", str(AGENTS / "openhands-trajectory.json")])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [
        {
            "run": "openhands-trajectory",
            "start": "2025-05-20T10:00:00Z",
            "end": "2025-05-20T10:00:40Z",
            "seconds": 40.0,
            "agent": "openhands",
            "tool_calls": 3,
            "tool_errors": 2,
            "path": str(AGENTS / "openhands-trajectory.json"),
        }
    ]
    table = CliRunner().invoke(app, ["sessions", str(AGENTS / "fix-greeting.traj")]).stdout
    assert table.splitlines()[1:] == [
        "run\tstart\tend\tseconds\tagent\ttool calls\ttool errors\tpath",
        f"fix-greeting\t-\t-\t-\tswe-agent\t5\t2\t{AGENTS / 'fix-greeting.traj'}",
    ]

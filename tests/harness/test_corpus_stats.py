"""``ouro corpus stats``: runs found from paths, per-run and total counts, a table or stable JSON."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ouroboros_gates.harness import TOOL_ERROR_DEFINITION, collect, expand, read
from ouroboros_gates.ops.cli.corpus import app
from ouroboros_gates.schemas import HarnessKind
from ouroboros_gates.schemas.errors import CorpusError

Jq = Callable[..., list[Any]]

ROOT = Path(__file__).resolve().parents[2]


def _stats_json(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(app, ["stats", *args, "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert isinstance(document, dict)
    return document


def test_paths_become_runs(fixtures: Path, tmp_path: Path) -> None:
    # In the harness layout (a <run>/events.jsonl below it) a folder's runs are those, nothing beside them.
    [harness] = expand([fixtures])
    assert (harness.name, harness.files) == ("envelope_run", (fixtures / "envelope_run" / "events.jsonl",))
    loose = tmp_path / "captures"
    shutil.copytree(fixtures, loose, ignore=shutil.ignore_patterns("envelope_run"))
    # Claude Code transcripts are a run per session, named by sessionId; the other captures one run.
    found = {run.name: len(run.files) for run in expand([loose])}
    assert found == {
        "5f0c9a52-1111-4c3e-9d0a-6c0b7e2a9a01": 1,
        "9b7d2c11-2222-4d5e-8f70-1a2b3c4d5e02": 1,
        "0c1d2e3f-3333-4a4b-9c9d-2e3f4a5b6c03": 1,
        "captures": 6,
    }
    assert [run.name for run in expand([str(fixtures / "stream_*.ndjson")])] == [
        "stream_interleaved",
        "stream_restart",
    ]
    assert [
        run.name for run in expand([fixtures / "hooks_session.jsonl", fixtures / "hooks_session.jsonl"])
    ] == ["hooks_session"]  # named twice, read once
    with pytest.raises(CorpusError, match="matches nothing"):
        expand([str(tmp_path / "*.jsonl")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="no harness logs"):
        expand([tmp_path / "empty"])


def test_totals_add_up_and_sessions_are_distinct(fixtures: Path) -> None:
    found = collect(
        [
            fixtures / "stream_restart.ndjson",
            fixtures / "stream_interleaved.ndjson",
            fixtures / "mixed_formats.jsonl",
        ]
    )
    runs, total = found.runs, found.total
    assert total.lines == sum(run.lines for run in runs) == 13 + 10 + 9
    assert sum(total.tool_calls.values()) == 3 + 2 + 1
    assert total.tool_errors == {"Bash": 2}
    assert total.cost_usd == pytest.approx(0.55 + 0.27 + 0.05)
    # mixed_formats.jsonl repeats a session of stream_restart.ndjson: counted once in the total.
    assert len(total.sessions) == len(set().union(*(run.sessions for run in runs))) == 1 + 2 + 3
    assert [(m.span.line, m.span.file.endswith("mixed_formats.jsonl")) for m in total.malformed] == [
        (6, True),
        (7, True),
    ]


def test_json_is_stable_and_complete(fixtures: Path) -> None:
    first = _stats_json(str(fixtures / "*"))
    assert _stats_json(str(fixtures / "*")) == first
    assert set(first) == {"runs", "total", "tool_error_definition"}
    assert first["tool_error_definition"] == TOOL_ERROR_DEFINITION
    total = first["total"]
    assert isinstance(total, dict)
    assert set(total) == {
        "run",
        "path",
        "files",
        "format",
        "formats",
        "lines",
        "malformed",
        "malformed_lines",
        "sessions",
        "tool_calls",
        "tool_calls_by_tool",
        "subagent_tool_calls",
        "tool_errors",
        "tool_errors_by_tool",
        "usage",
        "cost_usd",
        "turns",
        "agents",
        "relays_skipped",
        "notes",
        "agent",
        "tool_errors_by_gate",
        "h_r",
        "started_at",
        "ended_at",
        "unread",
        "vanished",
    }
    assert total["malformed"] == 3 and total["files"] == 10 and total["vanished"] == []
    where = {(Path(m["file"]).name, m["line"]) for m in total["malformed_lines"]}
    assert where == {("events.jsonl", 8), ("mixed_formats.jsonl", 6), ("mixed_formats.jsonl", 7)}
    # Two last lines are still being written (no newline, not JSON yet): notes, not malformed lines.
    pending = sorted(
        (Path(note.split(":")[0]).name, int(note.split(":")[1]))
        for note in total["notes"]
        if "last line not finished" in note
    )
    assert pending == [("events.jsonl", 10), ("transcript_session.jsonl", 12)]
    # transcript T1, subagent S1, stream R1 (refused twice, counted once) and R3, hook H1, envelope E2
    assert total["tool_errors"] == 6
    assert set(total["usage"]) == {
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    }


def test_table_shows_runs_total_tools_and_malformed_lines(fixtures: Path) -> None:
    result = CliRunner(env={"COLUMNS": "220"}).invoke(
        app, ["stats", str(fixtures / "envelope_run"), str(fixtures / "hooks_session.jsonl")]
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "envelope_run" in out and "hooks_session" in out and "total" in out
    assert "Tool calls by tool" in out
    assert "events.jsonl:8: not UTF-8 (byte 0xe9 at column 76)" in out
    assert "struggle (tool error):" in out


def test_ouro_corpus_stats_is_registered_and_errors_are_one_line(fixtures: Path, tmp_path: Path) -> None:
    env = {**os.environ, "OURO_STATE": str(tmp_path / "state"), "COLUMNS": "200"}
    run = [sys.executable, "-c", "from ouroboros_gates.ops.cli import main; main()", "corpus", "stats"]
    ok = subprocess.run(
        [*run, str(fixtures / "hook_single.json"), "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["total"]["tool_calls_by_tool"] == {"Bash": 1}
    bad = subprocess.run(
        [*run, str(tmp_path / "missing")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip() == f"ouro: error: {tmp_path / 'missing'}: no such file or directory"


def test_piped_output_is_never_cut_or_wrapped(tmp_path: Path) -> None:
    # What an agent's Bash tool sees: a pipe, an 80-column default, a run name longer than any table could
    # show.
    run = tmp_path / ("a-run-whose-name-is-much-longer-than-eighty-columns-" + "x" * 60)
    run.mkdir()
    line = {
        "type": "result",
        "session_id": "s",
        "total_cost_usd": 0.123456,
        "usage": {"input_tokens": 1234567890, "cache_read_input_tokens": 9876543210},
    }
    (run / "events.jsonl").write_text(json.dumps(line) + "\n")
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "TERM")}
    ouro = Path(sys.executable).with_name("ouro")
    for argv in (
        ["corpus", "stats", str(run)],
        ["corpus", "sessions", str(run)],
        ["measure", "h-fleet", str(run)],
    ):
        piped = subprocess.run(
            [str(ouro), *argv], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert piped.returncode == 0, piped.stderr
        assert "…" not in piped.stdout and "─" not in piped.stdout and "│" not in piped.stdout, piped.stdout
        rows = [row.split("\t") for row in piped.stdout.splitlines() if "\t" in row]
        assert any(run.name in row for row in rows), piped.stdout
    stats = subprocess.run(
        [str(ouro), "corpus", "stats", str(run)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).stdout
    [row] = [row.split("\t") for row in stats.splitlines() if row.startswith(run.name)]
    assert row[8] == "1234567890" and row[10] == "9876543210" and row[-1] == "0.1235"


TRANSCRIPTS = {
    "short": "55604662-cf2a-4331-851a-ec234028f8ca",
    "tool_heavy": "d6e0bada-1959-4eec-a9d2-0bfade768d8f",
    "subagent": "491e126e-1e71-469c-ade2-fcc8af567c74",
}
MAROT = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"


SWE_AGENT = {  # the trajectories' steps, failed steps and instance_cost, as jq counts them in the test below
    "demo__ctf__crypto__BabyEncryption": (16, 5, 0.0),
    "demo__function_calling_simple": (5, 0, None),
    "demo__replay__marshmallow-code__marshmallow-1867__function_calling_replace__install-1__marshmallow-code__"
    "marshmallow-1867": (11, 1, 0.0),
    (
        "gpt4__swe-agent-test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1__6e44b9"
        "__sweagenttestrepo-1c2844"
    ): (
        5,
        0,
        0.01952,
    ),
    "gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1"
    "__swe-agent__test-repo-i1": (
        5,
        0,
        0.53839,
    ),
    "gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1__pydicom"
    "__pydicom-1458": (
        12,
        4,
        1.26719,
    ),
}
UNREAD = {  # files of the captures that are no harness log: fragments of one message, SWE-agent's predictions
    "permission_denial.json",
    "tool_result_block.json",
    "usage_stats.json",
    "gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1__all_preds.jsonl",
}


def test_real_captures_in_one_go(agent_logs: Path) -> None:
    result = CliRunner().invoke(app, ["stats", str(agent_logs), "--json"])
    assert result.exit_code == 1, result.output  # some input was not read: named below, the rest reported
    found = json.loads(result.stdout)
    runs = {run["run"]: run for run in found["runs"]}
    assert set(runs) == {
        "chrisbarrett_deno-claude-code-hook",
        "ranaroussi_quantstats",
        "charlieyou_claude-agent-sdk-gleam",
        "golden",
        *TRANSCRIPTS.values(),
        MAROT,
        *SWE_AGENT,
        "swe_agent_traj",
    }
    transcripts = [runs[session] for session in TRANSCRIPTS.values()]
    assert {run["format"] for run in transcripts} == {"transcript"}
    assert [(run["tool_calls"], run["tool_errors"]) for run in transcripts] == [(2, 2), (6, 0), (25, 3)]
    assert (
        runs["ranaroussi_quantstats"]["tool_calls"] == 20
        and runs["ranaroussi_quantstats"]["format"] == "hook"
    )
    assert runs["golden"]["cost_usd"] == 0.1354875
    assert {
        name: (runs[name]["tool_calls"], runs[name]["tool_errors"], runs[name]["cost_usd"])
        for name in SWE_AGENT
    } == SWE_AGENT
    assert {runs[name]["agent"] for name in SWE_AGENT} == {"swe-agent"}
    assert found["total"]["malformed"] == 0
    assert {Path(bad["file"]).name for bad in found["total"]["unread"]} == UNREAD
    assert runs["swe_agent_traj"]["files"] == 1 and runs["swe_agent_traj"]["unread"]
    for name in UNREAD:
        assert f"{name}: not read: no object in a known format" in result.stderr


def test_swe_agent_counts_equal_an_independent_count(agent_logs: Path, jq: Jq) -> None:
    # jq reads each trajectory as SWE-agent writes it: a step per action, a failure by the observation's text.
    failed = "|".join(
        [
            "^Traceback [(]most recent call last[)]",
            "^Your proposed edit has introduced new syntax error",
            "^(/bin/)?(ba)?sh: .*(command not found|No such file or directory|syntax error)",
            ": command not found$",
            "^Usage: ",
            "^Error: ",
            "^ERROR: ",
            "^EXECUTION TIMED OUT",
            "^The command .* was cancelled",
        ]
    )
    program = (
        "(if (.trajectory // []) | length > 0 then [.trajectory[].observation] else [.history[] | "
        'select(.role == "tool") | .content] end) as $seen | {calls: ($seen | length), errors: ([$seen[] | '
        f'select(type == "string" and test("{failed}"))] | length), cost: .info.model_stats.instance_cost}}'
    )
    for name, counted in SWE_AGENT.items():
        [independent] = jq(program, agent_logs / "swe_agent_traj" / f"{name}.traj")
        calls, errors, cost = counted
        assert (independent["calls"], independent["errors"]) == (calls, errors), name
        assert independent["cost"] == (None if cost is None else pytest.approx(cost, abs=1e-10)), name
    # Each step is at the line its object starts on in the pretty-printed file.
    traj = agent_logs / "swe_agent_traj" / "demo__ctf__crypto__BabyEncryption.traj"
    steps = [line for line, text in enumerate(traj.read_text().splitlines(), start=1) if text == "    {"][:16]
    calls = [event.span.line for event in read(traj) if event.kind is HarnessKind.TOOL_CALL]
    assert calls == steps and len(set(calls)) == 16


def test_each_file_is_its_own_cost_counter(fixtures: Path, tmp_path: Path) -> None:
    line = '{"type": "result", "session_id": "s", "total_cost_usd": %s}\n'
    (tmp_path / "a.ndjson").write_text(line % "0.4")
    (tmp_path / "b.ndjson").write_text(line % "0.5")  # another process of the same session, in its own file
    (run,) = collect([tmp_path]).runs
    assert run.cost_usd == pytest.approx(0.9) and len(run.sessions) == 1

"""h_fleet from run files is the reference jq number (docs/loop.md), to the last bit, and its offenders are
ranked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ouroboros_gates.ops.cli import app
from ouroboros_gates.workers.measurer import FLOOR, RunRatio, hfleet, offenders, read_h_fleet, run_name

JQ = shutil.which("jq")
JQ_PROGRAM = (
    '[inputs | if .event_type == "result" then .event.usage // {}'
    ' elif .type == "result" and (has("event_type") | not) then .usage // {} else empty end'
    " | {r: (.cache_read_input_tokens // 0),"
    " t: ((.input_tokens // 0) + (.cache_creation_input_tokens // 0) + (.cache_read_input_tokens // 0))}]"
    " | (map(.r) | add) / (map(.t) | add)"
)
needs_jq = pytest.mark.skipif(JQ is None, reason="jq is not installed")


def jq(files: list[Path]) -> float:
    assert JQ is not None
    out = subprocess.run([JQ, "-n", JQ_PROGRAM, *map(str, files)], capture_output=True, text=True, check=True)
    return float(out.stdout)


COUNT = st.one_of(
    st.integers(0, 10**9), st.none(), st.floats(0, 1e6, allow_nan=False).map(lambda x: round(x, 3))
)
USAGE = st.one_of(
    st.none(),
    st.dictionaries(
        st.sampled_from(
            ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"]
        ),
        COUNT,
    ),
)


def _envelope(kind: str, usage: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": kind, "session_id": "s"}
    if usage is not None:
        event["usage"] = usage
    return {"ts": "2026-10-03T10:00:00Z", "event_type": kind, "event": event}


LINE = st.one_of(
    USAGE.map(lambda u: _envelope("result", u)),
    USAGE.map(lambda u: _envelope("assistant", u)),  # usage on another line type is not counted
    USAGE.map(lambda u: {"type": "result", "usage": u}),  # bare stream-json (claude -p): counted as well
    st.just({"event_type": "result"}),  # no event at all: counts as zeros
    st.just({"event_type": "result", "event": None}),
)
RUNS = st.lists(st.lists(st.one_of(LINE, st.just("")), max_size=12), min_size=1, max_size=4)


def write_runs(root: Path, runs: list[list[Any]]) -> list[Path]:
    files = []
    for i, lines in enumerate(runs):
        path = root / f"run-{i}" / "events.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join((json.dumps(line) if line != "" else "") + "\n" for line in lines))
        files.append(path)
    return files


@needs_jq
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RUNS)
def test_h_fleet_is_the_jq_number(runs: list[list[Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        files = write_runs(Path(tmp), runs)
        result = read_h_fleet(files)
        assert result.malformed == 0
        if result.value is None:
            return  # jq fails here: 0/0, or null/null with no result line
        assert result.value == jq(files)


@needs_jq
def test_h_fleet_counts_and_skips_malformed_lines(tmp_path: Path) -> None:
    good = [
        _envelope("result", {"input_tokens": 10, "cache_read_input_tokens": 990}),
        _envelope("result", {"cache_creation_input_tokens": 7, "cache_read_input_tokens": 3}),
    ]
    clean = write_runs(tmp_path / "clean", [good])
    bad = [
        '{"event_type": "result", "event": {"usage": {"input_tokens": 1',  # truncated
        '["result", 2]',
        json.dumps({"event_type": "result", "event": "a string"}),
        json.dumps({"event_type": "result", "event": {"usage": 5}}),
        json.dumps({"event_type": "result", "event": {"usage": {"input_tokens": "12"}}}),
        json.dumps({"event_type": "result", "event": {"usage": {"input_tokens": True}}}),
    ]
    dirty = tmp_path / "dirty" / "events.jsonl"
    dirty.parent.mkdir()
    unread = ["not json at all", "[1, 2]"]  # no "result" in them: never parsed (jq would stop there)
    dirty.write_text("\n".join([json.dumps(good[0]), *bad, *unread, json.dumps(good[1])]) + "\n")
    result = read_h_fleet([dirty])
    assert result.malformed == len(bad)
    assert result.results == 2
    assert result.lines == len(bad) + len(unread) + 2
    assert result.value == jq(clean) == 993 / 1010


@needs_jq
def test_h_fleet_read_by_several_processes_is_the_jq_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = [
        [
            _envelope("result", {"input_tokens": i, "cache_read_input_tokens": 1000 * i + 0.5}),
            _envelope("assistant", {"input_tokens": 7}),
        ]
        for i in range(1, 12)
    ]
    files = write_runs(tmp_path, runs)
    files[-1].write_bytes(files[-1].read_bytes().rstrip(b"\n"))  # a last line without its newline is read too
    alone = read_h_fleet(files)
    monkeypatch.setattr(hfleet, "PARALLEL_FILES", 2)
    monkeypatch.setattr(hfleet, "PARALLEL_BYTES", 0)
    assert hfleet._workers(files) > 1 or len(os.sched_getaffinity(0)) == 1
    shared = read_h_fleet(files)
    assert shared == alone
    assert (shared.value, shared.lines, shared.results) == (jq(files), 22, 11)


def test_h_fleet_names_a_file_a_reader_process_could_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = write_runs(tmp_path, [[_envelope("result", {"input_tokens": 1})]] * 6)
    monkeypatch.setattr(hfleet, "PARALLEL_FILES", 2)
    monkeypatch.setattr(hfleet, "PARALLEL_BYTES", 0)
    with pytest.raises(OSError) as raised:
        read_h_fleet([*files, tmp_path])  # a directory: it has a size, but no bytes to read
    assert raised.value.filename == str(tmp_path)


HEAVY = ("sqlalchemy", "celery", "kombu", "pydantic_settings", "schemas", "numpy")
"""What ``ouro measure h-fleet`` must not load (typer itself imports pydantic to coerce a typed option); of
``schemas`` only the error tree, the forked child and the harness line kinds (standard library alone)."""
LIGHT = (
    "schemas",
    "ouroboros_gates.schemas._child",
    "ouroboros_gates.schemas._lazy",
    "ouroboros_gates.schemas.errors",
    "ouroboros_gates.schemas.kinds",
)


def test_h_fleet_command_imports_no_heavy_library(tmp_path: Path) -> None:
    files = write_runs(tmp_path, [[_envelope("result", {"input_tokens": 1, "cache_read_input_tokens": 3})]])
    script = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from ouroboros_gates.ops.cli.measure import measure_app\n"
        f"out = CliRunner().invoke(measure_app, ['h-fleet', '--json', {str(files[0])!r}])\n"
        "assert out.exit_code == 0, out.output\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} and m not in {LIGHT!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_h_fleet_without_results_is_none(tmp_path: Path) -> None:
    (files,) = [write_runs(tmp_path, [[_envelope("assistant", {"input_tokens": 5})]])]
    result = read_h_fleet(files)
    assert result.value is None
    assert result.runs == (RunRatio("run-0", 0.0, 0.0),)


def test_offenders_are_ranked_lowest_first_and_exclude_runs_without_tokens() -> None:
    runs = [
        RunRatio("b", 90, 100),
        RunRatio("a", 90, 100),
        RunRatio("c", 99, 100),
        RunRatio("z", 0, 0),
        RunRatio("d", 0, 5),
    ]
    assert [r.run for r in offenders(runs)] == ["d", "a", "b"]
    assert [r.run for r in offenders(runs, floor=0.95)] == ["d", "a", "b"]
    assert RunRatio("x", 98.67, 100).h == pytest.approx(FLOOR)


def test_run_name() -> None:
    assert run_name(Path("/s/abc/events.jsonl")) == "abc"
    assert run_name(Path("/s/other.jsonl")) == "other"


@needs_jq
def test_cli_h_fleet_json_equals_jq(tmp_path: Path) -> None:
    runs = [
        [
            _envelope(
                "result",
                {"input_tokens": 3, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 1},
            )
        ],
        [_envelope("result", {"input_tokens": 10, "cache_read_input_tokens": 123456})],
        [_envelope("result", {"input_tokens": 1000, "cache_read_input_tokens": 99000})],
    ]
    files = write_runs(tmp_path, runs)
    out = CliRunner().invoke(app, ["measure", "h-fleet", "--json", str(tmp_path / "run-*")])
    assert out.exit_code == 0, out.output
    doc = orjson.loads(out.stdout)
    assert doc["h_fleet"] == jq(files)
    assert [(o["rank"], o["run"]) for o in doc["offenders"]] == [(1, "run-0")]  # run-2 is 0.99, above
    assert doc["runs"] == 3 and doc["malformed"] == 0
    table = CliRunner().invoke(app, ["measure", "h-fleet", str(tmp_path)])
    assert table.exit_code == 0 and repr(jq(files)) in table.stdout


def test_cli_h_fleet_names_a_missing_path(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["measure", "h-fleet", str(tmp_path / "nope*")])
    assert out.exit_code != 0
    assert "matches nothing" in str(out.exception)


def test_h_fleet_reaps_its_readers_when_its_own_share_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = write_runs(tmp_path, [[_envelope("result", {"input_tokens": 1})]] * 6)
    monkeypatch.setattr(hfleet, "PARALLEL_FILES", 2)
    monkeypatch.setattr(hfleet, "PARALLEL_BYTES", 0)
    with pytest.raises(OSError) as raised:
        read_h_fleet([tmp_path, *files])  # the parent's own share fails first
    assert raised.value.filename == str(tmp_path)
    with pytest.raises(ChildProcessError):  # every forked reader was waited for: none is left a zombie
        os.waitpid(-1, os.WNOHANG)


def _turn(session: str, message: str, usage: dict[str, int], **extra: Any) -> dict[str, Any]:
    """One transcript line of an assistant response (a response split over lines repeats its usage)."""
    body = {"id": message, "role": "assistant", "content": [{"type": "text", "text": "…"}], "usage": usage}
    return {
        "type": "assistant",
        "sessionId": session,
        "uuid": f"u-{message}",
        "requestId": f"r-{message}",
        "timestamp": "2026-10-03T10:00:00Z",
        "message": body,
        **extra,
    }


def write_session(project: Path, session: str = "s-1") -> Path:
    """A bare Claude Code session (no envelope): two lines of one response, a second response, a subagent's
    transcript beside it, and the parent's relay of that subagent's response."""
    first = {"input_tokens": 4, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 900}
    second = {"input_tokens": 6, "cache_read_input_tokens": 1990}
    sub = {"input_tokens": 10, "cache_creation_input_tokens": 40, "cache_read_input_tokens": 50}
    relay = {
        "type": "progress",
        "sessionId": session,
        "uuid": "u-p",
        "data": {"type": "agent_progress", "agentId": "a1", "message": _turn(session, "m-sub", sub)},
    }
    main = [_turn(session, "m-1", first), _turn(session, "m-1", first), relay, _turn(session, "m-2", second)]
    project.mkdir(parents=True)
    (project / f"{session}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in main))
    agents = project / session / "subagents"
    agents.mkdir(parents=True)
    own = _turn(session, "m-sub", sub, isSidechain=True, agentId="a1")
    (agents / "agent-a1.jsonl").write_text(json.dumps(own) + "\n")
    return project


def test_a_bare_claude_code_session_is_one_result_of_its_usage(tmp_path: Path) -> None:
    project = write_session(tmp_path / "projects" / "-home-me-repo")
    write_runs(tmp_path / "runs", [[_envelope("result", {"input_tokens": 1, "cache_read_input_tokens": 99})]])
    out = CliRunner().invoke(app, ["measure", "h-fleet", "--json", str(project), str(tmp_path / "runs")])
    assert out.exit_code == 0, out.output
    doc = orjson.loads(out.stdout)
    # each response once, the subagent's once (its relay in the parent is not counted again)
    read, prompt = 900 + 1990 + 50, 1004 + 1996 + 100
    assert (doc["runs"], doc["results"], doc["lines"], doc["malformed"]) == (2, 2, 6, 0)
    assert doc["h_fleet"] == (read + 99) / (prompt + 100)
    assert [(o["run"], o["cache_read"], o["prompt_tokens"]) for o in doc["offenders"]] == [
        ("s-1", read, prompt)
    ]


def test_a_session_is_read_the_same_alone_and_by_several_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = [write_session(tmp_path / f"p{i}", f"s-{i}") for i in range(3)]
    runs: list[tuple[str, Sequence[Path]]] = [
        (f"s-{i}", sorted(p.rglob("*.jsonl"))) for i, p in enumerate(sessions)
    ]
    runs += [
        (f"run-{i}", (path,))
        for i, path in enumerate(
            write_runs(
                tmp_path / "runs",
                [
                    [_envelope("result", {"input_tokens": i, "cache_read_input_tokens": 100})]
                    for i in range(4)
                ],
            )
        )
    ]
    alone = hfleet.read_h_fleet_runs(runs)
    monkeypatch.setattr(hfleet, "PARALLEL_FILES", 2)
    monkeypatch.setattr(hfleet, "PARALLEL_BYTES", 0)
    assert hfleet.read_h_fleet_runs(runs) == alone
    assert (alone.results, len(alone.runs)) == (7, 7)


def test_a_real_session_counts_the_usage_corpus_stats_counts(shared_corpora: Path) -> None:
    from ouroboros_gates.harness import collect

    projects = shared_corpora / "agent_logs" / "claude_code_projects"
    out = CliRunner().invoke(app, ["measure", "h-fleet", "--json", str(projects)])
    assert out.exit_code == 0, out.output
    doc, usage = orjson.loads(out.stdout), collect([projects]).total.usage
    assert (doc["runs"], doc["results"]) == (1, 1)
    assert doc["h_fleet"] == usage.cache_read_input_tokens / usage.prompt_tokens

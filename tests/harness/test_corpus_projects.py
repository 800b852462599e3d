"""Claude Code's projects layout: a run per session named by its sessionId, its subagents read with it and
attributed, relayed lines recognised and never counted twice; counts checked against straight JSON parsing
of the real session in ../shared/corpora/agent_logs/claude_code_projects/marot_spotter."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ouroboros_gates.harness import MAIN_AGENT, collect, expand, read
from ouroboros_gates.harness.line import Tokens
from ouroboros_gates.schemas import HarnessKind, Usage

SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


@pytest.fixture
def project(agent_logs: Path) -> Path:
    return agent_logs / "claude_code_projects" / "marot_spotter"


def independent_count(path: Path) -> tuple[int, int, Usage]:
    """Tool calls, tool errors and usage of one transcript by plain JSON parsing: only its own user and
    assistant lines (a ``progress`` line's relayed message is left out), each call and error once by id,
    usage once per (message.id, requestId) at its field-wise largest."""
    calls, errors, responses = set(), set(), dict[tuple[Any, Any], dict[str, int]]()
    for line in path.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        message = doc.get("message")
        if doc.get("type") not in ("user", "assistant") or not isinstance(message, dict):
            continue
        for block in message["content"] if isinstance(message.get("content"), list) else []:
            if block.get("type") == "tool_use":
                calls.add(block["id"])
            elif block.get("type") == "tool_result" and block.get("is_error") is True:
                errors.add(block["tool_use_id"])
        if doc["type"] == "assistant" and isinstance(message.get("usage"), dict):
            key, seen = (
                (message.get("id"), doc.get("requestId")),
                responses.get((message.get("id"), doc.get("requestId"))),
            )
            reported: dict[str, Any] = message["usage"]
            responses[key] = {f: max((seen or {}).get(f, 0), reported.get(f) or 0) for f in FIELDS}
    usage = Usage(**{f: sum(r[f] for r in responses.values()) for f in FIELDS})
    return len(calls), len(errors), usage


def test_a_real_session_counts_each_call_and_token_once_by_agent(project: Path) -> None:
    main = project / f"{SESSION}.jsonl"
    subagents = sorted((project / SESSION / "subagents").glob("agent-*.jsonl"))
    expected = {MAIN_AGENT: independent_count(main)} | {
        f.stem.removeprefix("agent-"): independent_count(f) for f in subagents
    }
    assert expected[MAIN_AGENT][:2] == (242, 12) and expected["aac57f5"][:2] == (12, 0)
    [run] = collect([project]).runs
    assert (run.run, run.files, run.notes) == (SESSION, 3, ())
    found = {
        name: (agent.tool_calls, agent.tool_errors, agent.usage.typed()) for name, agent in run.agents.items()
    }
    assert found == expected
    # The session read with its subagents is the sum of its parts, each part read on its own.
    assert sum(run.tool_calls.values()) == sum(calls for calls, _, _ in expected.values()) == 254
    assert sum(run.tool_errors.values()) == sum(errors for _, errors, _ in expected.values()) == 12
    parts = collect([main, *subagents]).runs
    assert run.usage.typed() == sum((usage for _, _, usage in expected.values()), Usage())
    assert run.usage == sum(
        (
            part.agents[name].usage
            for part in parts
            for name in part.agents
            if not (part.path == str(main) and name != MAIN_AGENT)
        ),
        Tokens(),
    )
    # The 25 relayed messages the main transcript carries (12 of them tool calls) are the subagent's own
    # lines.
    assert run.relays_skipped == 49 and run.subagent_tool_calls == 12


def test_every_way_of_naming_the_session_is_the_same_run(project: Path) -> None:
    named = [project.parent, project, project / SESSION, project / SESSION / "subagents"]
    for path in named:
        [run] = expand([path])
        assert (run.name, len(run.files), run.path) == (SESSION, 3, project / SESSION), path
    assert read(project / SESSION).files == expand([project])[0].files
    # Naming the transcript file reads that file: a note says what else its session holds.
    [alone] = expand([project / f"{SESSION}.jsonl"])
    assert (alone.name, alone.files) == (SESSION, (project / f"{SESSION}.jsonl",))
    assert alone.notes == (
        f"{project / SESSION}.jsonl: read alone; its session {SESSION} has 2 other file(s) (subagents, "
        "resumed "
        f"parts), read when the session's folder {project / SESSION} or its project folder is named",
    )


def test_a_session_folder_without_its_main_transcript_is_a_run_with_a_note(
    project: Path, tmp_path: Path
) -> None:
    copied = tmp_path / "projects" / "marot"
    shutil.copytree(project / SESSION, copied / SESSION)
    [run] = collect([tmp_path / "projects"]).runs
    assert run.run == SESSION and run.files == 2
    assert run.notes == (
        f"{copied / SESSION}.jsonl: the session's main transcript is absent; its 2 subagent file(s) read "
        "alone",
    )
    assert MAIN_AGENT not in run.agents and run.agents["aac57f5"].tool_calls == 12


def test_a_main_transcript_alone_counts_its_relays_as_the_subagents_only_record(
    project: Path, tmp_path: Path
) -> None:
    shutil.copyfile(project / f"{SESSION}.jsonl", tmp_path / f"{SESSION}.jsonl")
    [run] = collect([tmp_path]).runs
    assert run.relays_skipped == 0 and run.agents[MAIN_AGENT].tool_calls == 242
    assert run.agents["aac57f5"].tool_calls == 12  # from the relays: nothing else records them here


def test_events_carry_relay_and_result_text(project: Path) -> None:
    reader = read(project / SESSION)
    events = list(reader)
    relayed = [e for e in events if e.relay]
    assert relayed and {e.agent for e in relayed} == {"aac57f5"} and all(reader.repeats(e) for e in relayed)
    assert all(e.usage is None for e in relayed)
    misses = [
        e
        for e in events
        if e.kind is HarnessKind.TOOL_RESULT
        and (e.result_text or "").startswith("<tool_use_error>String to replace not found")
    ]
    assert [(e.tool, e.span.line, e.is_error) for e in misses] == [("Edit", 259, True), ("Edit", 1300, True)]


def test_bad_lines_in_a_session_are_skipped_counted_and_named(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "s1" / "subagents").mkdir(parents=True)
    line = {"type": "user", "sessionId": "s1", "uuid": "u1", "message": {"role": "user", "content": "hi"}}
    (project / "s1.jsonl").write_text(
        f"{json.dumps(line)}\nnot json\n{json.dumps({**line, 'type': 'brand-new'})}\n"
    )
    agent = {**line, "isSidechain": True, "agentId": "a1"}
    (project / "s1" / "subagents" / "agent-a1.jsonl").write_text(
        f"{json.dumps(agent)}\n{json.dumps(agent)[:30]}"
    )
    [run] = collect([project]).runs
    assert run.run == "s1" and run.malformed_count == 1 and run.lines == 4
    assert [str(bad).split(": ", 1)[0] for bad in run.malformed] == [f"{project / 's1.jsonl'}:2"]
    # The subagent's cut last line is one still being written: named in a note, not malformed.
    assert any(
        note.startswith(f"{project / 's1' / 'subagents' / 'agent-a1.jsonl'}:2: last line not finished")
        for note in run.notes
    )
    assert run.formats == {"transcript": 3}  # the line of an unknown type is kept, as a transcript line


def test_stats_print_each_session_and_its_agents(project: Path) -> None:
    from typer.testing import CliRunner

    from ouroboros_gates.ops.cli.corpus import app

    table = CliRunner().invoke(
        app, ["stats", str(project)]
    )  # not a terminal: tab-separated, every value whole
    assert table.exit_code == 0, table.output
    rows = {
        line.split("\t")[0].strip(): line.split("\t") for line in table.stdout.splitlines() if "\t" in line
    }
    assert {SESSION, "agent main", "agent aac57f5", "agent acompact-946d2b", "total"} <= set(rows)
    header = rows["run"]
    assert [rows["agent main"][header.index(name)] for name in ("tool calls", "tool errors")] == ["242", "12"]
    assert "49 relayed subagent event(s) skipped" in table.stdout
    document = json.loads(CliRunner().invoke(app, ["stats", "--json", str(project)]).stdout)
    [run] = document["runs"]
    assert (run["run"], run["tool_calls"], run["relays_skipped"]) == (SESSION, 254, 49)
    assert {name: agent["tool_calls"] for name, agent in run["agents"].items()} == {
        MAIN_AGENT: 242,
        "aac57f5": 12,
        "acompact-946d2b": 0,
    }


def test_transcripts_of_one_session_are_one_run_and_repeated_lines_count_once(tmp_path: Path) -> None:
    def assistant(call: str, message: str) -> str:
        block = {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "ls"}}
        body = {"id": message, "role": "assistant", "content": [block], "usage": {"input_tokens": 5}}
        return json.dumps(
            {"type": "assistant", "sessionId": "s1", "requestId": f"r{message}", "message": body}
        )

    project = tmp_path / "proj"
    project.mkdir()
    (project / "first.jsonl").write_text(assistant("t1", "m1") + "\n")
    (project / "resumed.jsonl").write_text(assistant("t1", "m1") + "\n" + assistant("t2", "m2") + "\n")
    (project / "other.jsonl").write_text(assistant("t9", "m9").replace('"s1"', '"s2"') + "\n")
    runs = {run.run: run for run in collect([project]).runs}
    assert {
        name: (run.files, sum(run.tool_calls.values()), run.usage.input_tokens) for name, run in runs.items()
    } == {
        "s1": (2, 2, 10),
        "s2": (1, 1, 5),
    }
    # The folder's session reads back from the path it gives (<project>/<sessionId>: it has no folder of its
    # own).
    named = next(run for run in expand([project]) if run.name == "s1")
    assert (named.files, named.path) == ((project / "first.jsonl", project / "resumed.jsonl"), project / "s1")
    assert read(named.path).files == named.files
    # Naming one file reads that file, with a note.
    [alone] = expand([project / "resumed.jsonl"])
    assert (alone.name, alone.files) == ("s1", (project / "resumed.jsonl",)) and "read alone" in alone.notes[
        0
    ]

"""A session id is never one of the state's own files: sessions are recorded under ``<state>/runs/``, so a
session named ``gates.json``, ``gate.log`` or ``events.sqlite`` is judged like any other and leaves the gate
cache, the server's log and the event log alone; a session an earlier version began at ``<state>/<id>/``
goes on there."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hook_support import decision, hook_line, post_tool, pre_tool, run_hook, self_match_gate

from ouroboros_gates.ops.gate.paths import run_file, session_name

pytestmark = pytest.mark.slow

OFFENDING = "pkill -f 'node server.js'"
STATE_FILES = [
    "gate.sock",
    "gate.log",
    "gate.lock",
    "gate.pid",
    "gates.json",
    "events.sqlite",
    "events.sqlite-wal",
    "broker.sqlite",
    "ouroboros.json",
    "export.key",
    "spool",
    "runs",
    "forge",
    "fixers",
    "..",
]


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    state = tmp_path_factory.mktemp("sessions") / "state"
    with self_match_gate(state) as command:
        database = sqlite3.connect(state / "events.sqlite")  # an event log, as the embedded fleet keeps one
        database.execute("create table events (position integer primary key, payload text)")
        database.commit()
        database.close()
        yield state, command


def test_session_ids_naming_state_files_are_recorded_under_runs_and_judged(gated: tuple[Path, str]) -> None:
    state, command = gated
    cache = (state / "gates.json").read_bytes()
    for n, session in enumerate(STATE_FILES):
        innocent = run_hook(command, pre_tool(session, "ls", f"t{n}a"))
        offending = run_hook(command, pre_tool(session, OFFENDING, f"t{n}b"))
        assert (decision(innocent), decision(offending)) == ("allow", "deny"), (session, offending.stderr)
        log = Path(run_file(str(state), session_name(session)))
        assert log.parent.parent == state / "runs", log
        ids = [json.loads(line)["event"].get("tool_use_id") for line in log.read_text().splitlines()]
        assert ids[-3:] == [f"t{n}a", f"t{n}b", f"t{n}b"]  # the two calls, then the refusal recorded
    assert (state / "gates.json").read_bytes() == cache  # the gate cache, untouched
    assert (state / "gate.log").is_file() and (state / "gate.lock").is_file()
    database = sqlite3.connect(state / "events.sqlite")  # the event log still opens, its table there
    assert database.execute("select count(*) from events").fetchone() == (0,)
    database.close()
    assert not (state / "events.sqlite-wal").is_dir() and not (state / "broker.sqlite").exists()


def test_a_session_an_earlier_version_began_goes_on_where_it_is(gated: tuple[Path, str]) -> None:
    state, command = gated
    earlier = state / "sess-earlier" / "events.jsonl"  # the layout before runs/
    earlier.parent.mkdir()
    first = pre_tool("sess-earlier", OFFENDING, "toolu_e1")
    earlier.write_text(
        hook_line("2026-10-01T00:00:00Z", first)
        + "\n"
        + hook_line("2026-10-01T00:00:01Z", post_tool("sess-earlier", OFFENDING, "toolu_e1", failed=True))
        + "\n"
    )
    assert (
        decision(run_hook(command, pre_tool("sess-earlier", "ls", "toolu_e2"))) == "allow"
    )  # the old one held
    assert decision(run_hook(command, pre_tool("sess-earlier", OFFENDING, "toolu_e3"))) == "deny"
    ids = [json.loads(line)["event"].get("tool_use_id") for line in earlier.read_text().splitlines()]
    assert ids[:4] == ["toolu_e1", "toolu_e1", "toolu_e2", "toolu_e3"]  # one run, in one file
    assert not (state / "runs" / "sess-earlier").exists()

"""``ouro hook`` on PreToolUse, driven exactly as Claude Code drives a command hook: the command from
the settings ``ouro hooks install`` writes, run through a shell with the JSON payload on stdin, its
stdout and exit code read. The gates are real accepted miners: a small deny miner built and accepted in
a temporary ``OURO_MINERS_PATH`` (``force-push``), the template's warn miner (``draft-pr-late``), and
the installed ``self-match`` when it passes its test.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hook_support import build_force_push, gate_command, hook_line, post_tool, pre_tool, run_hook, stop_server

from ouroboros_gates.ops.gate.client import notify
from ouroboros_gates.ops.gate.paths import lock_path, run_file
from ouroboros_gates.ops.hooks_install import hook_command, merge_settings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A state directory whose gates are force-push (deny) and draft-pr-late (warn), its server up."""
    root = tmp_path_factory.mktemp("hook")
    miners = root / "miners"
    miners.mkdir()
    build_force_push(miners)
    previous = os.environ.get("OURO_MINERS_PATH")
    os.environ["OURO_MINERS_PATH"] = str(miners)
    state = root / "state"
    state.mkdir()
    try:
        command = gate_command(state, ["force-push", "draft-pr-late"])
        gates = json.loads((state / "gates.json").read_text())["gates"]
        assert {(g["name"], g["gate"]) for g in gates} == {("force-push", "deny"), ("draft-pr-late", "warn")}
        yield state, command
    finally:
        stop_server(state)
        if previous is None:
            os.environ.pop("OURO_MINERS_PATH", None)
        else:
            os.environ["OURO_MINERS_PATH"] = previous


def _lines(state: Path, session: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in Path(run_file(str(state), session)).read_text().splitlines()]


def test_deny_gate_refuses_the_offending_call_citing_its_proof(gated: tuple[Path, str]) -> None:
    state, command = gated
    session = "sess-deny"
    assert (
        run_hook(
            command, {"session_id": session, "hook_event_name": "SessionStart", "source": "startup"}
        ).stdout
        == ""
    )
    innocent = run_hook(command, pre_tool(session, "git status", "toolu_1"))
    assert (innocent.returncode, innocent.stdout) == (0, "")
    run_hook(command, post_tool(session, "git status", "toolu_1"))

    offending = run_hook(command, pre_tool(session, "git push --force origin main", "toolu_2"))
    assert offending.returncode == 0, offending.stderr
    output = json.loads(offending.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "PreToolUse"
    assert output["permissionDecision"] == "deny"
    reason = output["permissionDecisionReason"]
    log = state / "runs" / session / "events.jsonl"
    pending = next(
        n for n, line in enumerate(_lines(state, session), 1) if line["event"].get("tool_use_id") == "toolu_2"
    )
    assert 'force_push("sess-deny", "toolu_2")' in reason
    assert f'pushes("sess-deny", "toolu_2") at {log}:{pending}' in reason
    assert f'forced("sess-deny", "toolu_2") at {log}:{pending}' in reason

    # The refused call stays in the run (with the refusal after it) and never refuses an innocent call.
    recorded = _lines(state, session)
    assert recorded[pending - 1]["event"]["tool_input"]["command"] == "git push --force origin main"
    assert recorded[pending]["event_type"] == "gate" and recorded[pending]["event"]["decision"] == "deny"
    after = run_hook(command, pre_tool(session, "ls -la", "toolu_3"))
    assert (after.returncode, after.stdout) == (0, "")
    again = run_hook(command, pre_tool(session, "git push -f origin main", "toolu_4"))
    assert json.loads(again.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "toolu_4" in json.loads(again.stdout)["hookSpecificOutput"]["permissionDecisionReason"]


def test_every_payload_is_recorded_in_the_csf_envelope_with_unknown_fields(gated: tuple[Path, str]) -> None:
    state, command = gated
    payload = {
        **pre_tool("sess-record", "echo hi", "toolu_9"),
        "effort": {"level": "high"},
        "new_field": [1, 2],
    }
    assert run_hook(command, payload).returncode == 0
    run_hook(command, {"session_id": "sess-record", "hook_event_name": "Stop", "stop_hook_active": False})
    first, second = _lines(state, "sess-record")
    assert first["event_type"] == "hook" and first["event"] == payload
    assert isinstance(first["ts"], str) and first["ts"].endswith("Z")
    assert second["event"]["hook_event_name"] == "Stop"
    spooled = (state / "spool" / "hooks.jsonl").read_text().splitlines()
    assert any(json.loads(line)["run"] == "sess-record" for line in spooled)


def test_warn_gate_adds_context_and_never_denies(gated: tuple[Path, str]) -> None:
    state, command = gated
    session = "sess-warn"
    started = (datetime.now(UTC) - timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    (state / session).mkdir()
    start = {"session_id": session, "hook_event_name": "SessionStart", "source": "startup"}
    (state / session / "events.jsonl").write_text(
        hook_line(started, start) + "\n"
    )  # an hour old, no draft PR

    # Warn gates are evaluated after the answer (off the hot path) and told on the session's next call.
    first = run_hook(command, pre_tool(session, "ls", "toolu_w1"))
    assert (first.returncode, first.stdout) == (0, ""), first.stderr
    assert notify(str(state), {"op": "ping", "drain": True}, wait_s=30.0)
    second = run_hook(command, pre_tool(session, "ls", "toolu_w2"))
    assert second.returncode == 0, second.stderr
    output = json.loads(second.stdout)["hookSpecificOutput"]
    assert set(output) == {"hookEventName", "additionalContext"}  # context only: no permission decision
    context = output["additionalContext"]
    assert 'draft-pr-late (warn, SEVERITY_S3) warns: invisible("sess-warn")' in context
    assert f'gated("sess-warn") at {state / session / "events.jsonl"}:1' in context
    assert f"{state / session / 'events.jsonl'}:2" in context  # the score's span: the call it was seen with
    assert notify(str(state), {"op": "ping", "drain": True}, wait_s=30.0)
    third = run_hook(command, pre_tool(session, "ls", "toolu_w3"))
    assert (third.returncode, third.stdout) == (0, "")  # told once per session


@pytest.mark.parametrize(
    "stdin", ["not json", '{"session_id": "x"}', "[1, 2]", "\x00\x01garbage", "", '{"hook_event_name']
)
def test_malformed_stdin_allows_with_one_warning_line(gated: tuple[Path, str], stdin: str) -> None:
    _state, command = gated
    result = run_hook(command, stdin)
    assert (result.returncode, result.stdout) == (0, "")
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ouro hook: ") and "allowed" in lines[0]


def test_no_server_in_time_allows_within_the_timeout(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "gates.json").write_text(json.dumps({"version": 1, "gates": [{"name": "x"}]}))
    command = hook_command(state)
    started = time.monotonic()
    held = open(lock_path(str(state)), "a")  # noqa: SIM115 (a server "already running" that never answers)
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        result = run_hook(
            command, pre_tool("s", "ls", "t1"), env={"OURO_HOOK_TIMEOUT_S": "1", "OURO_GATE_IDLE_S": "1"}
        )
        assert time.monotonic() - started < 4
        assert (result.returncode, result.stdout) == (0, "")
        assert result.stderr.startswith("ouro hook: ") and "allowed" in result.stderr
    finally:
        held.close()
        time.sleep(0.5)
        stop_server(state)  # the server the hook started in the background


def test_installed_self_match_denies_a_pending_pkill_f_that_matches_itself(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    previous = os.environ.pop("OURO_MINERS_PATH", None)
    try:
        command = gate_command(state, ["self-match"])
        if not json.loads((state / "gates.json").read_text())["gates"]:
            pytest.skip("self-match does not pass its own test yet, so it is not a gate")
        session = "sess-self"
        earlier = 'pkill -f "python -m http.server"'
        run_hook(
            command, pre_tool(session, earlier, "toolu_s1")
        )  # the run so far already has one self-match…
        run_hook(command, post_tool(session, earlier, "toolu_s1", failed=True))
        innocent = run_hook(command, pre_tool(session, "python -m http.server 8000 &", "toolu_s2"))
        assert (innocent.returncode, innocent.stdout) == (0, "")  # …which never refuses an innocent call
        pending = run_hook(command, pre_tool(session, "pgrep -f 'pytest -q' && echo running", "toolu_s3"))
        reason = json.loads(pending.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
        assert 'self_match("sess-self", "toolu_s3")' in reason and "events.jsonl:" in reason
    finally:
        stop_server(state)
        if previous is not None:
            os.environ["OURO_MINERS_PATH"] = previous


def test_a_fresh_state_denies_a_self_matching_pkill_f_from_the_first_calls(tmp_path: Path) -> None:
    state = tmp_path / "state"  # nothing compiled, no server: as `ouro hooks install` leaves a new user
    previous = os.environ.pop("OURO_MINERS_PATH", None)
    try:
        settings = merge_settings({}, hook_command(state))
        command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        offending = "pkill -f 'node server.js'"
        first = run_hook(command, pre_tool("sess-fresh", offending, "toolu_f1"))
        assert first.returncode == 0
        answered = first
        if first.stdout == "":  # allowed while the gates compiled: then the very next call denies
            assert "allowed" in first.stderr
            answered = run_hook(command, pre_tool("sess-fresh", offending, "toolu_f2"))
        output = json.loads(answered.stdout)["hookSpecificOutput"]
        assert output["permissionDecision"] == "deny"
        assert "Ouroboros gate self-match (deny" in output["permissionDecisionReason"]
        assert "self-match" in {g["name"] for g in json.loads((state / "gates.json").read_text())["gates"]}
    finally:
        stop_server(state)
        if previous is not None:
            os.environ["OURO_MINERS_PATH"] = previous


def test_the_hot_path_imports_neither_celery_nor_sqlalchemy_nor_alembic(gated: tuple[Path, str]) -> None:
    _state, command = gated
    traced = run_hook(
        command.replace(" -P ", " -X importtime -P "), pre_tool("sess-imports", "git push -f", "t1")
    )
    assert (
        json.loads(traced.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    )  # the whole path ran
    imported = {
        line.split("|")[-1].strip().removeprefix("ouroboros_gates.").split(".")[0]
        for line in traced.stderr.splitlines()
        if "|" in line
    }
    assert "ops" in imported
    assert not imported & {
        "celery",
        "kombu",
        "sqlalchemy",
        "alembic",
        "pydantic",
        "schemas",
        "events",
        "miners",
    }

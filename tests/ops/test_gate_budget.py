"""No payload holds the gate server: a 10 MB command is decided (and the next call still denied), a line
whose pattern backtracks without end is left out within its budget, and a server stuck where no signal
reaches ends itself and the next call starts a fresh one. Driven as Claude Code drives the hook."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hook_support import (
    build_force_push,
    decision,
    gate_command,
    miners_path,
    pre_tool,
    run_hook,
    self_match_gate,
    stop_server,
    wait_for,
)

from ouroboros_gates.ops.gate.client import server_pid
from ouroboros_gates.ops.gate.paths import log_path
from ouroboros_gates.ops.gate.server import WEDGED_S

pytestmark = pytest.mark.slow

OFFENDING = "pkill -f 'node server.js'"
TRACE = {"OURO_HOOK_TRACE": "1", "OURO_HOOK_TIMEOUT_S": "120"}  # the server's own decision, never a timeout


@pytest.fixture(scope="module")
def self_match(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A state whose one gate is the installed self-match, its server up."""
    state = tmp_path_factory.mktemp("budget") / "state"
    with self_match_gate(state) as command:
        yield state, command


def _decided_by_the_server(result: object) -> None:
    stderr = getattr(result, "stderr", "")
    assert "ouro hook: trace decision=" in stderr and "allowed" not in stderr, stderr


def test_a_10_mb_command_is_decided_and_the_next_call_still_denies(self_match: tuple[Path, str]) -> None:
    state, command = self_match
    pid = server_pid(str(state))
    padding = "echo '" + "a" * (10 << 20) + "'"
    innocent = run_hook(command, pre_tool("long", padding, "toolu_l1"), env=TRACE, timeout=120)
    _decided_by_the_server(innocent)
    assert decision(innocent) == "allow"
    leading = run_hook(
        command, pre_tool("long", f"{OFFENDING}; {padding}", "toolu_l2"), env=TRACE, timeout=120
    )
    _decided_by_the_server(leading)
    assert decision(leading) == "deny"  # the offense is in the part that is read
    after = run_hook(command, pre_tool("long", OFFENDING, "toolu_l3"), env=TRACE)
    assert decision(after) == "deny"
    assert decision(run_hook(command, pre_tool("other", OFFENDING, "toolu_o1"), env=TRACE)) == "deny"
    assert server_pid(str(state)) == pid  # the same server throughout: never stuck, never restarted

    stop_server(state)  # a fresh server reads the long session again from its first line
    wait_for(lambda: server_pid(str(state)) is None)
    again = run_hook(command, pre_tool("long", OFFENDING, "toolu_l4"), env=TRACE, timeout=120)
    assert decision(again) == "deny"


def test_a_pattern_that_backtracks_without_end_is_left_out_and_the_server_goes_on(
    self_match: tuple[Path, str],
) -> None:
    state, command = self_match
    pid = server_pid(str(state))
    evil = "pkill -f '(x+x+)+y' " + "x" * 64  # the pattern against its own command line: exponential
    opened = run_hook(command, pre_tool("redos", evil, "toolu_r1"), env=TRACE, timeout=120)
    assert decision(opened) == "allow"  # OURO_GATE_FAIL=open (the default): allowed, and said
    assert "self-match:" in opened.stderr and "took over" in opened.stderr
    closed_env = {**TRACE, "OURO_GATE_FAIL": "closed"}
    closed = run_hook(command, pre_tool("redos", evil + "x", "toolu_r2"), env=closed_env, timeout=120)
    assert decision(closed) == "deny"
    assert (
        "could not judge this call"
        in json.loads(closed.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    )
    assert decision(run_hook(command, pre_tool("redos", OFFENDING, "toolu_r3"), env=TRACE)) == "deny"
    assert decision(run_hook(command, pre_tool("redos", "ls", "toolu_r4"), env=TRACE)) == "allow"
    assert server_pid(str(state)) == pid
    assert "left out" in Path(log_path(str(state))).read_text()


def test_a_server_stuck_where_no_signal_reaches_ends_and_the_next_call_starts_another(tmp_path: Path) -> None:
    miners = tmp_path / "miners"
    miners.mkdir()
    build_force_push(miners, wedge_on="wedge-the-gate")
    state = tmp_path / "state"
    state.mkdir()
    with miners_path(miners):
        try:
            command = gate_command(state, ["force-push"])
            stuck_pid = server_pid(str(state))
            stuck = run_hook(
                command, pre_tool("a", "echo wedge-the-gate", "t1"), env={"OURO_HOOK_TIMEOUT_S": "2"}
            )
            assert decision(stuck) == "allow" and "the call is allowed" in stuck.stderr
            wait_for(lambda: server_pid(str(state)) is None, seconds=WEDGED_S + 60)
            log = Path(log_path(str(state))).read_text()
            assert (
                f"Timeout (0:00:{WEDGED_S:02.0f})!" in log and "in extract" in log
            )  # faulthandler's traceback
            pushed = pre_tool("b", "git push --force origin main", "t2")
            fresh = run_hook(command, pushed, env={"OURO_HOOK_TIMEOUT_S": "60"})
            assert decision(fresh) == "deny"
            assert server_pid(str(state)) not in (None, stuck_pid)
        finally:
            stop_server(state)

"""Parallel tool calls of one session: each is judged on the lines recorded before its own, whatever order
its decision is asked in. In process (decisions asked in the reverse of the order the calls were recorded)
and as Claude Code runs them (twenty hook processes at once, four of them a self-matching ``pkill -f``,
against a gate server that is not running yet and then against the one they started)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hook_support import build_force_push, decision, pre_tool, run_hook, self_match_gate

from ouroboros_gates.ops.gate.cache import compile_gates
from ouroboros_gates.ops.gate.record import append_line, envelope
from ouroboros_gates.ops.gate.server import GateServer

OFFENDING = "pkill -f 'node server.js'"
"""Matches its own shell's command line: the installed self-match gate denies it."""


@pytest.fixture
def force_push(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    miners = tmp_path / "miners"
    miners.mkdir()
    build_force_push(miners)
    monkeypatch.setenv("OURO_MINERS_PATH", str(miners))
    state = tmp_path / "state"
    state.mkdir()
    assert [g.name for g in compile_gates(state, ["force-push"]).gates] == ["force-push"]
    return state


def _record(state: Path, command: str, call: str) -> dict[str, object]:
    log = state / "runs" / "s1" / "events.jsonl"
    start, end = append_line(str(log), envelope(pre_tool("s1", command, call)))
    return {"op": "decide", "file": str(log), "run": "s1", "start": start, "end": end}


def test_a_later_call_decided_first_never_hides_an_earlier_offense(force_push: Path) -> None:
    server = GateServer(force_push)
    requests = [_record(force_push, command, f"t{n}") for n, command in enumerate(["git status", "ls"])]
    offending = _record(force_push, "git push --force origin main", "t2")
    innocent = [_record(force_push, command, f"t{n}") for n, command in [(3, "git log"), (4, "make test")]]
    order = [innocent[1], innocent[0], offending, *reversed(requests)]  # the reverse of the recorded order
    verdicts = {str(r["start"]): server.handle(r)["decision"] for r in order}
    assert verdicts[str(offending["start"])] == "deny"
    assert sorted(verdicts.values()) == ["allow"] * 4 + ["deny"]
    again = server.handle(offending)  # asked twice (a retry): the same answer
    assert again["decision"] == "deny" and again["fired"] == ["force-push"]


@pytest.fixture(scope="module")
def self_match(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A state whose one gate is the installed self-match, compiled, no server running yet."""
    state = tmp_path_factory.mktemp("parallel") / "state"
    with self_match_gate(state, start=False) as command:
        yield state, command


def _twenty_at_once(command: str, session: str) -> list[tuple[str, str]]:
    """Twenty PreToolUse calls of one session started together (the 3rd, 8th, 13th and 18th self-match);
    (command, decision) for each."""
    calls = [OFFENDING if n % 5 == 2 else f"ls -la src/part{n}" for n in range(20)]
    barrier = threading.Barrier(len(calls))
    # Past any wait on this shared machine: a late answer would allow by design, which is not under test.
    env = {"OURO_HOOK_TIMEOUT_S": "300"}

    def one(n: int) -> tuple[str, str]:
        barrier.wait()
        result = run_hook(command, pre_tool(session, calls[n], f"toolu_{n:02d}"), env=env, timeout=400)
        assert "allowed" not in result.stderr, result.stderr
        return calls[n], decision(result)

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(one, range(len(calls))))


@pytest.mark.slow
def test_twenty_parallel_calls_deny_every_self_matching_one_cold_and_warm(
    self_match: tuple[Path, str],
) -> None:
    state, command = self_match
    for round_, session in enumerate(["cold", "warm-1", "warm-2"]):  # the first round starts the server
        decided = _twenty_at_once(command, f"parallel-{session}")
        denied = [call for call, verdict in decided if verdict == "deny"]
        assert denied == [OFFENDING] * 4, (round_, decided)
        log = state / "runs" / f"parallel-{session}" / "events.jsonl"
        gate_lines = [
            json.loads(line) for line in log.read_text().splitlines() if '"event_type":"gate"' in line
        ]
        assert len(gate_lines) == 4 and {g["event"]["decision"] for g in gate_lines} == {"deny"}

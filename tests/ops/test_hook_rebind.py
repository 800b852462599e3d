"""The gate server in process: a miner accepted between two calls binds from the next one, a miner whose
files change after acceptance stops binding until it is accepted again, and the session log is read
incrementally with the spans the corpus readers would give."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hook_support import build_force_push, pre_tool

from ouroboros_gates.harness import read
from ouroboros_gates.ops.gate import evaluate as evaluate_module
from ouroboros_gates.ops.gate import gates as gates_module
from ouroboros_gates.ops.gate import server as server_module
from ouroboros_gates.ops.gate.cache import compile_gates, read_gates, write_gates
from ouroboros_gates.ops.gate.evaluate import events_facts
from ouroboros_gates.ops.gate.facts import SessionFacts
from ouroboros_gates.ops.gate.paths import session_name
from ouroboros_gates.ops.gate.record import append_line, envelope
from ouroboros_gates.ops.gate.server import GateServer
from ouroboros_gates.ops.gate.session import Line, SessionLog, read_events


@pytest.fixture
def miners(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    directory = tmp_path / "miners"
    directory.mkdir()
    build_force_push(directory)
    monkeypatch.setenv("OURO_MINERS_PATH", str(directory))
    monkeypatch.setattr(gates_module, "STAMP_EVERY_S", 0.0)
    yield directory / "force_push"


def _call(server: GateServer, state: Path, command: str, call: str) -> dict[str, object]:
    log = state / "s1" / "events.jsonl"
    start, end = append_line(str(log), envelope(pre_tool("s1", command, call)))
    return server.handle({"op": "decide", "file": str(log), "run": "s1", "start": start, "end": end})


def test_a_miner_accepted_between_two_calls_binds_from_the_next(
    tmp_path: Path, miners: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    write_gates(state, [], "default", "2026-10-01T00:00:00Z")
    server = GateServer(state)
    assert _call(server, state, "git push --force", "t1")["decision"] == "allow"

    compiled = compile_gates(state, ["force-push"])
    assert [g.name for g in compiled.gates] == ["force-push"] and compiled.gates[0].knee is None
    denied = _call(server, state, "git push --force", "t2")
    assert denied["decision"] == "deny" and denied["fired"] == ["force-push"]
    assert denied["output"]["hookSpecificOutput"]["permissionDecision"] == "deny"  # type: ignore[index]
    assert _call(server, state, "git status", "t3")["decision"] == "allow"

    recompiles: list[str] = []
    monkeypatch.setattr(
        gates_module.GateSet, "_recompile", lambda self, name, digest: recompiles.append(name)
    )
    rules = miners / "rules.dl"
    accepted = rules.read_text()
    rules.write_text(accepted + "\n% edited after acceptance\n")
    stale = _call(server, state, "git push --force", "t4")
    assert stale["decision"] == "allow" and recompiles == ["force-push"]  # unaccepted files never bind
    rules.write_text(accepted)
    os.utime(rules)
    assert _call(server, state, "git push --force", "t5")["decision"] == "deny"  # the accepted files again


def test_sync_warn_gates_answer_with_the_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OURO_MINERS_PATH", raising=False)
    state = tmp_path / "state"
    state.mkdir()
    assert [g.name for g in compile_gates(state, ["draft-pr-late"]).gates] == ["draft-pr-late"]
    log = state / "s1" / "events.jsonl"
    old = {"session_id": "s1", "hook_event_name": "SessionStart"}
    log.parent.mkdir()
    log.write_text(json.dumps({"ts": "2026-10-01T00:00:00Z", "event_type": "hook", "event": old}) + "\n")
    sync, deferred = GateServer(state, "sync"), GateServer(state, "next")
    answer = _call(sync, state, "ls", "t1")
    assert answer["decision"] == "allow" and answer["fired"] == []
    context = answer["output"]["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
    assert 'invisible("s1")' in context and f"{log}:2" in context
    assert _call(sync, state, "ls", "t2")["output"] is None  # told once
    assert _call(deferred, state, "ls", "t3")["output"] is None  # found off the request path…
    assert deferred.handle({"op": "ping", "drain": True})["ok"] is True and deferred.later.pending == 0
    told = _call(deferred, state, "ls", "t4")["output"]["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
    assert 'invisible("s1")' in told and f"{log}:4" in told  # seen with the call that was pending then (t3)
    assert "knee(468) (the κ* its backtest fitted)" in told


def test_a_deny_decision_costs_one_evaluation_per_gate(
    tmp_path: Path, miners: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    compile_gates(state, ["force-push"])
    server = GateServer(state)
    assert _call(server, state, "git push -f", "t1")["decision"] == "deny"  # first decision: checked twice
    counted: list[str] = []
    real = evaluate_module.evaluate

    def counting(gate: object, facts: object) -> object:
        counted.append("evaluate")
        return real(gate, facts)  # type: ignore[arg-type]

    monkeypatch.setattr(evaluate_module, "evaluate", counting)
    assert _call(server, state, "ls", "t2")["decision"] == "allow"
    assert _call(server, state, "git push --force", "t3")["decision"] == "deny"  # its proof cites the call
    assert counted == ["evaluate", "evaluate"]


def test_gate_cache_round_trip_and_broken_files(tmp_path: Path) -> None:
    assert read_gates(tmp_path) is None
    (tmp_path / "gates.json").write_text("{not json")
    assert read_gates(tmp_path) is None
    (tmp_path / "gates.json").write_text(
        json.dumps({"version": 1, "tenant": "t", "gates": [{"name": "half"}]})
    )
    compiled = read_gates(tmp_path)
    assert compiled is not None and compiled.tenant == "t" and compiled.gates == ()


@pytest.mark.parametrize(
    ("given", "name"),
    [
        ("b23e5d8a-855f-44c5-95f0-075485a6ffcf", "b23e5d8a-855f-44c5-95f0-075485a6ffcf"),
        ("../../etc/passwd", "etc-passwd"),
        ("", "no-session"),
        (None, "no-session"),
        ("spool", "session-spool"),
        ("a b/c", "a-b-c"),
    ],
)
def test_session_names_are_run_ids_never_paths(given: object, name: str) -> None:
    assert session_name(given) == name


def test_session_log_reads_incrementally_like_the_corpus_reader(tmp_path: Path) -> None:
    log = tmp_path / "s1" / "events.jsonl"
    session = SessionLog(log, "s1")
    ends = [append_line(str(log), envelope(pre_tool("s1", f"echo {n}", f"t{n}")))[1] for n in range(3)]
    with log.open("ab") as handle:
        handle.write(b"not json\n\n")
    ends.append(append_line(str(log), envelope({"session_id": "s1", "hook_event_name": "Stop"}))[1])
    first: list[Line] = []
    session.advance(ends[1], first.extend)
    assert session.lines == 2 and [(n, e.tool_use_id) for n, e in first] == [(1, "t0"), (2, "t1")]
    rest: list[Line] = []
    session.advance(ends[-1], rest.extend)
    assert session.line_at(ends[2]) == 3 and session.end_of(3) == ends[2] and session.lines == 6
    expected = [(e.kind, e.tool_use_id, e.span.line, e.span.file) for e in read(log, run="s1")]
    assert [(e.kind, e.tool_use_id, e.span.line, e.span.file) for _, e in first + rest] == expected
    assert [(e.kind, e.tool_use_id, e.span.line) for e in read_events(log, "s1", ends[2])] == [
        (kind, call, line) for kind, call, line, _ in expected[:3]
    ]
    generation = session.generation
    log.write_bytes(b"")  # truncated: read again from the start
    again: list[Line] = []
    session.advance(append_line(str(log), envelope(pre_tool("s1", "ls", "t9")))[1], again.extend)
    assert [(n, e.tool_use_id) for n, e in again] == [(1, "t9")] and session.generation == generation + 1


def test_ops_gate_surface_resolves_lazily() -> None:
    import subprocess
    import sys

    from ouroboros_gates.ops import gate

    assert gate.__all__ == sorted(gate.__all__)
    assert all(callable(getattr(gate, name)) for name in gate.__all__)
    probe = (
        "import sys, ouroboros_gates.ops.gate; "
        "print(sorted(m for m in sys.modules if m.startswith('ouroboros_gates.ops.gate.')))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"  # importing the package imports none of its modules
    with pytest.raises(AttributeError):
        _ = gate.no_such_name  # type: ignore[attr-defined]


def test_a_local_gate_keeps_the_facts_the_whole_run_gives_line_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OURO_MINERS_PATH", raising=False)
    state = tmp_path / "state"
    state.mkdir()
    assert [g.name for g in compile_gates(state, ["self-match"]).gates] == ["self-match"]
    server = GateServer(state)
    commands = ["pkill -f 'node a.js'", "ls", "pgrep -f pytest", "pkill -x bash", "pgrep -f '[p]ytest'"]
    decisions = [_call(server, state, command, f"t{n}")["decision"] for n, command in enumerate(commands)]
    assert decisions == ["deny", "allow", "deny", "allow", "allow"]
    log = state / "s1" / "events.jsonl"
    session = server.sessions[log.absolute()]
    (gate,) = server.gates.current("default")
    assert gate.miner.local
    whole = events_facts(gate, "s1", log.absolute(), read_events(log.absolute(), "s1", log.stat().st_size))
    assert len(whole) > 3 and session.facts.local(gate, session.log.lines) == whole  # kept as read, in order
    assert SessionFacts(session.log).local(gate, session.log.lines) == whole  # a gate new to the session
    before_last = session.log.lines - 1
    assert session.facts.local(gate, before_last) == [
        f for f in whole if f[2] is None or f[2].line <= before_last
    ]


def test_a_session_idle_for_long_is_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OURO_MINERS_PATH", raising=False)
    state = tmp_path / "state"
    state.mkdir()
    compile_gates(state, ["self-match"])
    server = GateServer(state)
    _call(server, state, "ls", "t1")
    assert list(server.sessions) == [(state / "s1" / "events.jsonl").absolute()]
    monkeypatch.setattr(server_module, "SESSION_IDLE_S", 0.0)
    log = state / "s2" / "events.jsonl"
    start, end = append_line(str(log), envelope(pre_tool("s2", "pkill -f 'node a.js'", "t2")))
    answer = server.handle({"op": "decide", "file": str(log), "run": "s2", "start": start, "end": end})
    assert answer["decision"] == "deny" and list(server.sessions) == [log.absolute()]  # s1 went idle: dropped


def test_a_log_outside_the_state_directory_is_refused_however_it_is_spelt(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    write_gates(state, [], "default", "2026-10-01T00:00:00Z")
    server = GateServer(state)
    (tmp_path / "events.jsonl").write_text("")
    dotted = state / ".." / "events.jsonl"  # its parent's parent is spelt <state>, but it lies beside it
    with pytest.raises(ValueError, match="is not a session log"):
        server._session({"file": str(dotted)})
    assert (
        server._session({"file": str(state / "s1" / "events.jsonl")}).log.path
        == state / "s1" / "events.jsonl"
    )

"""Hook logs as logging hooks keep them, and one session seen through two formats: PostToolUse-only logs count
their completed calls, a session's hook log read with its transcript is one run whose calls count once, the
gate's own denials are struggles attributed to the gate, and a stream-json process cut before its result line
is noted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ouroboros_gates.harness import collect, expand

REFUSAL = (
    'Ouroboros gate self-match (deny, SEVERITY_S2) refuses this call: self_match("s1", "t3", "node").\n'
    "Rule: a pkill -f whose pattern matches its own command line\nProof:\n  full_line(...) at events.jsonl:3"
)


def _write(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(doc) + "\n" for doc in docs))
    return path


def _payload(event: str, call: str | None, command: str, **extra: Any) -> dict[str, Any]:
    doc = {
        "session_id": "s1",
        "transcript_path": "/p/s1.jsonl",
        "cwd": "/p",
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": command},
        **extra,
    }
    return doc if call is None else {**doc, "tool_use_id": call}


def _envelope(event: dict[str, Any], kind: str = "hook") -> dict[str, Any]:
    return {"ts": "2026-03-01T10:00:00.000000Z", "event_type": kind, "event": event}


def test_a_post_tool_use_only_log_counts_its_completed_calls(tmp_path: Path) -> None:
    ok = {"tool_response": {"stdout": "", "stderr": "", "interrupted": False}}
    posts = [_payload("PostToolUse", None, f"echo {n}", **ok) for n in range(3)]
    posts.append(_payload("PostToolUseFailure", None, "false", error="Exit code 1"))
    [run] = collect([_write(tmp_path / "post.jsonl", posts)]).runs
    assert (sum(run.tool_calls.values()), sum(run.tool_errors.values())) == (4, 1)
    # With their PreToolUse kept too (read after them: files in name order), each call still counts once.
    pres = [_payload("PreToolUse", None, f"echo {n}") for n in range(3)] + [
        _payload("PreToolUse", None, "false")
    ]
    _write(tmp_path / "pre.jsonl", pres)
    [both] = collect([tmp_path]).runs
    assert (sum(both.tool_calls.values()), sum(both.tool_errors.values())) == (4, 1)
    with_ids = [_payload("PostToolUse", "t1", "ls", **ok), _payload("PreToolUse", "t1", "ls")]
    [by_id] = collect([_write(tmp_path / "ids" / "log.jsonl", with_ids)]).runs
    assert sum(by_id.tool_calls.values()) == 1


def test_a_session_through_its_transcript_and_its_hook_log_is_one_run(tmp_path: Path) -> None:
    def line(kind: str, block: dict[str, Any], uuid: str) -> dict[str, Any]:
        return {
            "type": kind,
            "sessionId": "s1",
            "uuid": uuid,
            "timestamp": "2026-03-01T10:00:01.000Z",
            "message": {"role": kind, "content": [block]},
        }

    project = tmp_path / "projects" / "p"
    _write(
        project / "s1.jsonl",
        [
            line(
                "assistant",
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
                "u1",
            ),
            line("user", {"type": "tool_result", "tool_use_id": "t1", "content": "a"}, "u2"),
            line(
                "assistant",
                {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "false"}},
                "u3",
            ),
            line(
                "user",
                {"type": "tool_result", "tool_use_id": "t2", "content": "Exit code 1", "is_error": True},
                "u4",
            ),
        ],
    )
    state = tmp_path / "state"
    _write(
        state / "s1" / "events.jsonl",
        [
            _envelope(doc)
            for doc in (
                _payload("PreToolUse", "t1", "ls"),
                _payload("PostToolUse", "t1", "ls"),
                _payload("PreToolUse", "t2", "false"),
                _payload("PostToolUseFailure", "t2", "false", error="Exit code 1"),
            )
        ],
    )
    [run] = expand([project, state])
    assert (run.name, run.files) == ("s1", (project / "s1.jsonl", state / "s1" / "events.jsonl"))
    assert "read through two formats" in run.notes[0]
    [stats] = collect([project, state]).runs
    assert (sum(stats.tool_calls.values()), sum(stats.tool_errors.values()), stats.formats) == (
        2,
        1,
        {"csf-envelope": 4, "transcript": 4},
    )


def test_gate_denials_are_struggles_of_the_gate_that_fired(tmp_path: Path) -> None:
    denied = [
        _envelope(
            {
                "hook_event_name": "OuroborosGate",
                "session_id": "s1",
                "tool_name": "Bash",
                "tool_use_id": f"d{n}",
                "decision": "deny",
                "gates": ["self-match"],
                "reason": REFUSAL,
            },
            kind="gate",
        )
        for n in range(5)
    ]
    calls = [_envelope(_payload("PreToolUse", f"d{n}", "pkill -f node")) for n in range(5)]
    log = _write(
        tmp_path / "s1" / "events.jsonl", [doc for pair in zip(calls, denied, strict=True) for doc in pair]
    )
    [run] = collect([log]).runs
    assert (sum(run.tool_calls.values()), run.tool_errors, run.tool_errors_by_gate) == (
        5,
        {"Bash": 5},
        {"self-match": 5},
    )
    # The transcript of the same session shows the refusal as an error whose text is the hook's reason.
    result = {
        "type": "user",
        "sessionId": "s1",
        "uuid": "u9",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t3", "is_error": True, "content": REFUSAL}],
        },
    }
    [seen] = collect([_write(tmp_path / "projects" / "s1.jsonl", [result])]).runs
    assert seen.tool_errors_by_gate == {"self-match": 1}


def test_a_stream_json_process_cut_before_its_result_is_noted(tmp_path: Path) -> None:
    usage = {"input_tokens": 3, "cache_read_input_tokens": 900, "output_tokens": 1}
    message = {"id": "m1", "role": "assistant", "usage": usage, "content": [{"type": "text", "text": "hi"}]}
    assistant = {"type": "assistant", "session_id": "k1", "message": message}
    cut = _write(
        tmp_path / "cut.ndjson", [{"type": "system", "subtype": "init", "session_id": "k1"}, assistant]
    )
    [run] = collect([cut]).runs
    assert run.usage.prompt_tokens == 0 and run.cache is None
    assert run.notes == (
        f"{cut}:2: session k1 ends without a result line (a process killed or still running): its last "
        "turn's "
        "usage and cost are not counted (assistant lines carry partial snapshots)",
    )
    result = {
        "type": "result",
        "subtype": "success",
        "session_id": "k1",
        "usage": usage,
        "total_cost_usd": 0.01,
    }
    whole = _write(tmp_path / "whole.ndjson", [assistant, result])
    [finished] = collect([whole]).runs
    assert finished.notes == () and finished.cache == 900 / 903

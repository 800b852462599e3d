"""A tool result's text (``HarnessEvent.result_text``) from every reader, as its format has it."""

from __future__ import annotations

import json
from pathlib import Path

from ouroboros_gates.harness import read
from ouroboros_gates.schemas import HarnessKind


def _results(path: Path) -> list[tuple[str | None, str | None, bool]]:
    return [
        (e.tool_use_id, e.result_text, e.is_error) for e in read(path) if e.kind is HarnessKind.TOOL_RESULT
    ]


def test_stream_json_transcript_and_envelope(tmp_path: Path) -> None:
    blocks = [
        {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": "Exit code 1\nfatal: no upstream",
            "is_error": True,
        },
        {
            "type": "tool_result",
            "tool_use_id": "t2",
            "content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}],
        },
        {"type": "tool_result", "tool_use_id": "t3", "content": []},
    ]
    user = {"type": "user", "message": {"role": "user", "content": blocks}}
    (tmp_path / "stream.ndjson").write_text(json.dumps({**user, "session_id": "s"}) + "\n")
    (tmp_path / "transcript.jsonl").write_text(json.dumps({**user, "sessionId": "s", "uuid": "u"}) + "\n")
    envelope = {"ts": "2026-10-01T10:00:00Z", "event_type": "user", "event": {**user, "session_id": "s"}}
    (tmp_path / "envelope.jsonl").write_text(json.dumps(envelope) + "\n")
    expected = [("t1", "Exit code 1\nfatal: no upstream", True), ("t2", "a\nb", False), ("t3", None, False)]
    for name in ("stream.ndjson", "transcript.jsonl", "envelope.jsonl"):
        assert _results(tmp_path / name) == expected, name


def test_hook_payloads(tmp_path: Path, agent_logs: Path) -> None:
    captured = agent_logs / "claude_code_hooks" / "chrisbarrett_deno-claude-code-hook"
    [(_, text, is_error)] = _results(captured / "PostToolUse.Bash.json")  # stdout "/test/project", stderr ""
    assert (text, is_error) == ("/test/project", False)
    common = {"session_id": "s", "transcript_path": "/t", "cwd": "/", "tool_name": "Bash", "tool_input": {}}
    lines = [
        {**common, "hook_event_name": "PostToolUseFailure", "tool_use_id": "f", "error": "Exit code 128"},
        {
            **common,
            "hook_event_name": "PostToolUse",
            "tool_use_id": "o",
            "tool_response": {"stdout": "", "stderr": "w"},
        },
        {
            **common,
            "hook_event_name": "PostToolUse",
            "tool_use_id": "r",
            "tool_name": "Read",
            "tool_response": "x",
        },
    ]
    (tmp_path / "hooks.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert _results(tmp_path / "hooks.jsonl") == [
        ("f", "Exit code 128", True),
        ("o", "w", False),
        ("r", "x", False),
    ]

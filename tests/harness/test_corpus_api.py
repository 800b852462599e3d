"""The package's public surface, its purity, and the format-detection rule."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ouroboros_gates import harness as corpus
from ouroboros_gates.harness import Format, classify, detect_format

PACKAGE = Path(corpus.__file__).resolve().parent


def test_public_surface_is_pinned_and_sorted() -> None:
    assert corpus.__all__ == sorted(corpus.__all__, key=lambda name: (not name.isupper(), name))
    assert set(corpus.__all__) == {
        "CACHE_UNREPORTED",
        "MAIN_AGENT",
        "TOOL_ERROR_DEFINITION",
        "AgentStats",
        "CorpusStats",
        "CostFold",
        "Format",
        "Layout",
        "Malformed",
        "Reader",
        "RunFiles",
        "RunStats",
        "SessionCosts",
        "ToolUse",
        "Unread",
        "cache_ratio",
        "call_key",
        "classify",
        "collect",
        "denied_by",
        "detect_format",
        "expand",
        "fold_cumulative",
        "format_of",
        "has_result_lines",
        "is_tool_error",
        "iter_events",
        "pair_tool_uses",
        "read",
        "run_at",
        "run_files",
        "run_name",
        "stats_of",
        "summarise",
        "unread_files",
    }
    assert all(hasattr(corpus, name) for name in corpus.__all__)


def test_modules_are_pure_small_and_documented() -> None:
    # The package's own imports: the contract and the standard library, never the event log.
    allowed = {
        "__future__",
        "bisect",
        "collections",
        "dataclasses",
        "datetime",
        "enum",
        "functools",
        "glob",
        "itertools",
        "json",
        "os",
        "pathlib",
        "re",
        "typing",
        "orjson",
        "pydantic",
        "schemas",
        "harness",
        "_lazy",
    }
    for module in PACKAGE.glob("*.py"):
        text = module.read_text()
        tree = ast.parse(text)
        names = {
            alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
        }
        names |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert {name.removeprefix("ouroboros_gates.").split(".")[0] for name in names} <= allowed, module.name
        assert {name for name in names if name.startswith("ouroboros_gates.harness.")} <= {
            f"ouroboros_gates.harness.{m.stem}" for m in PACKAGE.glob("*.py")
        }, module.name
        assert len(text.splitlines()) < 400, module.name
        assert ast.get_docstring(tree), f"{module.name} has no docstring"


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            {"ts": "2026-01-01T00:00:00Z", "event_type": "result", "event": {"type": "result"}},
            Format.ENVELOPE,
        ),
        ({"event_type": "result", "event": "not an object"}, Format.UNKNOWN),
        ({"hook_event_name": "Stop", "session_id": "s"}, Format.HOOK),
        ({"type": "user", "sessionId": "s", "message": {}}, Format.TRANSCRIPT),
        ({"type": "summary", "summary": "x", "leafUuid": "u"}, Format.TRANSCRIPT),
        ({"type": "file-history-snapshot", "messageId": "m"}, Format.TRANSCRIPT),
        ({"type": "user", "session_id": "s", "message": {}}, Format.STREAM_JSON),
        ({"type": "result", "subtype": "success"}, Format.STREAM_JSON),
        ({"type": "control_request", "session_id": "s"}, Format.STREAM_JSON),
        ({"type": ["odd"], "session_id": "s"}, Format.UNKNOWN),
        ({"tool_name": "Bash", "tool_use_id": "t"}, Format.UNKNOWN),
    ],
)
def test_each_object_is_classified_by_the_keys_only_its_format_writes(
    doc: dict[str, object], expected: Format
) -> None:
    assert classify(doc) is expected


def test_file_formats(fixtures: Path, tmp_path: Path) -> None:
    assert detect_format(fixtures / "transcript_session.jsonl") is Format.TRANSCRIPT
    assert detect_format(fixtures / "stream_restart.ndjson") is Format.STREAM_JSON
    assert detect_format(fixtures / "hooks_array.json") is Format.HOOK
    assert detect_format(fixtures / "mixed_formats.jsonl") is Format.MIXED
    (tmp_path / "empty.jsonl").write_text("\n\nnot json\n")
    assert detect_format(tmp_path / "empty.jsonl") is Format.EMPTY
    (tmp_path / "envelope.jsonl").write_text(
        '{"ts": "2026-01-01T00:00:00Z", "event_type": "system", "event": {}}\n'
    )
    assert detect_format(tmp_path / "envelope.jsonl") is Format.ENVELOPE


def test_real_capture_formats(agent_logs: Path) -> None:
    assert detect_format(agent_logs / "claude_code_transcripts" / "subagent.jsonl") is Format.TRANSCRIPT
    hooks = agent_logs / "claude_code_hooks"
    assert {detect_format(p) for p in hooks.rglob("*.json")} == {Format.HOOK}
    stream = agent_logs / "claude_code_stream_json" / "charlieyou_claude-agent-sdk-gleam"
    assert detect_format(stream / "golden" / "basic_query.ndjson") is Format.STREAM_JSON
    assert detect_format(stream / "result_success.json") is Format.STREAM_JSON

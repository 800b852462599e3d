"""Property: whatever the mix of good JSON lines and garbage, the reader never raises, reports every
garbage line at its number, and reads every good line."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ouroboros_gates.harness import read, summarise

scalars = (
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text()
)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3)
)
# Objects a harness could write, and ones shaped like each format (with wrong-typed fields too).
keys = st.sampled_from(
    [
        "type",
        "session_id",
        "sessionId",
        "hook_event_name",
        "event_type",
        "event",
        "message",
        "usage",
        "total_cost_usd",
        "timestamp",
        "ts",
        "tool_name",
        "tool_input",
        "tool_use_id",
        "requestId",
        "isSidechain",
        "data",
        "permission_denials",
        "content",
        "id",
        "subtype",
        "is_error",
    ]
) | st.text(max_size=8)
good_objects = st.dictionaries(keys, values, max_size=6)


def _not_json(blob: bytes) -> bool:
    try:
        orjson.loads(blob)
    except orjson.JSONDecodeError:
        return True
    return False


def _cut(obj: dict[str, Any], at: float) -> bytes:
    text = json.dumps(obj).encode()
    return text[: max(1, int(len(text) * at))]


# Garbage: lines cut short, bytes that are never valid JSON (0xff), and text that is not JSON.
garbage = (
    st.builds(_cut, good_objects.filter(bool), st.floats(0.05, 0.95))
    | st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" ") + b"\xff")
    | st.text(max_size=30).map(lambda t: ("x" + t.replace("\n", " ")).encode())
).filter(_not_json)
lines = st.lists(
    st.one_of(good_objects.map(lambda o: ("good", o)), garbage.map(lambda g: ("bad", g))), max_size=25
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines, st.booleans())
def test_the_reader_never_raises_and_accounts_for_every_line(
    mixed: list[tuple[str, Any]], final_newline: bool
) -> None:
    blobs = [orjson.dumps(item) if kind == "good" else item for kind, item in mixed]
    body = b"\n".join(blobs) + (b"\n" if final_newline and blobs else b"")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mixed.jsonl"
        path.write_bytes(body)
        reader = read(path)
        events = list(reader)
        # A bad last line with no newline is one still being written: pending, neither malformed nor counted.
        pending = bool(mixed) and not final_newline and mixed[-1][0] == "bad"
        counted = len(mixed) - pending
        bad_lines = [n for n, (kind, _) in enumerate(mixed[:counted], start=1) if kind == "bad"]
        good_lines = [n for n, (kind, _) in enumerate(mixed, start=1) if kind == "good"]
        reported = [m.span.line for m in reader.malformed if not m.reason.startswith("could not be typed")]
        assert reported == bad_lines
        untyped = {m.span.line for m in reader.malformed} - set(reported)
        assert untyped == set(), f"good lines the readers failed to type: {reader.malformed}"
        assert sorted({e.span.line for e in events}) == good_lines
        assert reader.lines == counted and len(reader.pending) == pending
        summary = summarise(read(path))
        assert summary.malformed == len(bad_lines) and summary.lines == counted

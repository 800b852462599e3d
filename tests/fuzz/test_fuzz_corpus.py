"""Fuzzing the JSONL readers of every format: real files of each format with random lines broken (cut
short, bytes flipped, replaced by garbage). The reader never raises, reports each broken line once at its
file:line, and still reads every line left intact."""

from __future__ import annotations

import tempfile
from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ouroboros_gates.harness import read

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "harness" / "fixtures"
FILES = {
    "envelope": FIXTURES / "envelope_run" / "events.jsonl",
    "envelope-example": next(iter(sorted((ROOT / "examples" / "runs").glob("*/events.jsonl")))),
    "hooks": FIXTURES / "hooks_session.jsonl",
    "mixed": FIXTURES / "mixed_formats.jsonl",
    "stream": FIXTURES / "stream_interleaved.ndjson",
    "stream-restart": FIXTURES / "stream_restart.ndjson",
    "transcript": FIXTURES / "transcript_session.jsonl",
    "transcript-sidechain": FIXTURES / "transcript_sidechain.jsonl",
}


def _baseline(path: Path) -> tuple[set[int], set[int]]:
    """The lines of the untouched file that give events, and those it already reports as malformed."""
    reader = read(path, run="fuzz")
    good = {event.span.line for event in reader if event.span is not None}
    return good, {bad.span.line for bad in reader.malformed}


BASELINE = {name: _baseline(path) for name, path in FILES.items()}


def _break(line: bytes, how: int, at: float) -> bytes:
    """A line no JSON parser accepts, made from ``line``."""
    cut = max(1, int(len(line) * at))
    made = [line[:cut], line[:cut] + b"\xff\xfe" + line[cut:], b"{" + line[cut:], b"not json: " + line[:cut]][
        how
    ]
    try:
        orjson.loads(made)
    except orjson.JSONDecodeError:
        return made
    return made + b" \xff"  # a cut that happened to leave valid JSON is broken for sure


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(FILES)),
    damage=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 3), st.floats(0.05, 0.95)), max_size=6),
)
def test_broken_lines_are_reported_where_and_the_rest_is_read(
    name: str, damage: list[tuple[int, int, float]]
) -> None:
    original = FILES[name].read_bytes().split(b"\n")
    numbered = [i for i, line in enumerate(original) if line.strip()]
    broken: dict[int, bytes] = {}
    for pick, how, at in damage:
        index = numbered[pick % len(numbered)]
        broken[index] = _break(original[index], how, at)
    lines = [broken.get(i, line) for i, line in enumerate(original)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / FILES[name].name
        path.write_bytes(b"\n".join(lines))
        reader = read(path, run="fuzz")
        events = list(reader)  # never raises
        reported = sorted(bad.span.line for bad in reader.malformed)
        expected = BASELINE[name][1] | {i + 1 for i in broken}
        if lines[-1].strip():  # no newline at the end: a broken last line is one still being written
            expected.discard(len(lines))
        assert reported == sorted(expected)  # each broken line once, at its own line number
        assert all(
            str(bad).startswith(f"{path}:{bad.span.line}: ") and bad.reason for bad in reader.malformed
        )
        read_lines = {e.span.line for e in events if e.span is not None}
        intact = BASELINE[name][0] - {i + 1 for i in broken}
        assert intact <= read_lines, f"intact lines not read: {sorted(intact - read_lines)}"

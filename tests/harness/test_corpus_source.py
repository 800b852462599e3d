"""Reading files: JSON lines or JSON documents, lazily, with every bad line reported and skipped."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from ouroboros_gates.harness import Layout, read, summarise
from ouroboros_gates.harness.source import Source
from ouroboros_gates.schemas.errors import CorpusError


def _lines_of(path: Path) -> tuple[list[int], list[tuple[int, str]], Source]:
    source = Source(path)
    good = [line for line, _ in source]
    return good, [(bad.span.line, bad.reason) for bad in source.malformed], source


def test_a_last_line_still_being_written_is_pending_not_malformed(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n{"c": ')
    good, bad, source = _lines_of(path)
    assert good == [1, 2] and bad == []
    assert source.lines == 2 and source.pending == (str(path), 3)
    with path.open("ab") as more:  # the writer finishes the line and writes another
        more.write(b'3}\n{"d": 4}\n')
    good, bad, source = _lines_of(path)
    assert good == [1, 2, 3, 4] and bad == [] and source.lines == 4 and source.pending is None


def test_a_bad_line_that_has_its_newline_is_malformed(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"a": 1}\n{"c": \n{"b": 2}\n')
    good, bad, source = _lines_of(path)
    assert good == [1, 3] and bad == [(2, "not JSON (unexpected end of data)")] and source.pending is None


def test_a_last_line_without_newline_that_parses_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "nonl.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}')
    assert _lines_of(path)[:2] == ([1, 2], [])


def test_non_utf8_bytes_are_named_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"a": 1}\n{"name": "caf\xe9"}\n{"c": 3}\n')
    good, bad, _ = _lines_of(path)
    assert good == [1, 3]
    assert bad == [(2, "not UTF-8 (byte 0xe9 at column 14)")]


def test_scalars_arrays_blank_lines_and_a_bom(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\n\n   \n42\n[{"b": 2}, 7, {"c": 3}]\nnull\n')
    good, bad, source = _lines_of(path)
    assert good == [1, 5, 5]  # both objects of the array on line 5
    assert bad == [
        (4, "not a JSON object (a JSON int)"),
        (5, "array element 1 is not a JSON object"),
        (6, "not a JSON object (a JSON NoneType)"),
    ]
    assert source.lines == 6 and source.layout is Layout.LINES


def test_a_10_mb_line_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    big = "x" * (10 * 1024 * 1024)
    with path.open("w") as handle:
        handle.write(json.dumps({"type": "user", "session_id": "s", "blob": big}) + "\n")
        handle.write('{"broken": "' + big + "\n")  # 10 MB of garbage too
        handle.write(json.dumps({"type": "result", "session_id": "s", "total_cost_usd": 0.5}) + "\n")
    reader = read(path)
    events = list(reader)
    assert [e.span.line for e in events] == [1, 3]
    assert len(events[0].raw["blob"]) == len(big)
    assert [(m.span.line, m.reason[:8]) for m in reader.malformed] == [(2, "not JSON")]


def test_reading_is_lazy_and_memory_stays_flat(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    line = json.dumps(
        {
            "type": "assistant",
            "session_id": "s",
            "message": {"content": [{"type": "text", "text": "y" * 600}]},
        }
    )
    with path.open("w") as handle:
        for _ in range(20_000):  # ~13 MB
            handle.write(line + "\n")
    reader = read(path)
    events = iter(reader)
    next(events)
    assert reader.lines == 1  # one line read to give the first event
    tracemalloc.start()
    count = sum(1 for _ in events)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert count == 19_999
    assert peak < 2 * 1024 * 1024, f"peak {peak} bytes: the reader is holding the file"


def test_a_pretty_printed_payload_is_one_object_at_its_first_line(tmp_path: Path) -> None:
    path = tmp_path / "hook.json"
    path.write_text(
        "\n" + json.dumps({"hook_event_name": "Stop", "session_id": "s", "nested": {"a": [1, 2]}}, indent=2)
    )
    good, bad, source = _lines_of(path)
    assert (good, bad, source.layout) == ([2], [], Layout.DOCUMENT)


def test_a_pretty_printed_array_yields_each_item_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    items = [{"hook_event_name": "PreToolUse", "k": 'a}{"\\'}, {"hook_event_name": "PostToolUse", "l": ["]"]}]
    path.write_text(json.dumps(items, indent=2))
    good, bad, source = _lines_of(path)
    assert source.layout is Layout.DOCUMENT and bad == []
    assert good == [2, 6]  # braces and quotes inside strings do not confuse the scanner


def test_several_pretty_objects_one_after_another(tmp_path: Path) -> None:
    path = tmp_path / "many.json"
    path.write_text("".join(json.dumps({"n": n, "deep": {"x": [n]}}, indent=1) + "\n" for n in range(3)))
    good, bad, _ = _lines_of(path)
    assert bad == [] and good == [1, 9, 17]


def test_a_document_that_never_closes_is_reported_at_its_start(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    text = json.dumps([{"a": 1}, {"b": {"c": 2}}], indent=2)
    path.write_text(text[: text.rindex("}") - 3])
    good, bad, source = _lines_of(path)
    assert source.layout is Layout.DOCUMENT
    assert good == [2]
    assert bad == [(5, "truncated: the JSON value starting here never closes")]


def test_a_bad_item_inside_a_document_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "mixed.json"
    path.write_text('[\n  {"a": 1},\n  {"b": tru},\n  {"c": 3}\n]\n')
    good, bad, _ = _lines_of(path)
    assert good == [2, 4]
    assert bad[0][0] == 3 and bad[0][1].startswith("not JSON")


def test_a_bad_first_line_does_not_turn_json_lines_into_a_document(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b'{"session_id": "s", "type": \n{"a": 1}\n{"b": 2}\n')
    good, bad, source = _lines_of(path)
    assert source.layout is Layout.LINES
    assert good == [2, 3] and [line for line, _ in bad] == [1]


def test_an_unreadable_path_is_one_corpus_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no such file"):
        read(tmp_path / "nope.jsonl")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="not a run"):
        read(tmp_path / "empty")


def test_every_bad_line_is_counted_but_reports_are_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ouroboros_gates.harness.source.MAX_REPORTED", 3)
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(
        b"".join(b"nope %d\n" % n for n in range(5)) + b'{"type": "result", "session_id": "s"}\n'
    )
    reader = read(path)
    assert len(list(reader)) == 1
    assert reader.malformed_count == 5 and [m.span.line for m in reader.malformed] == [1, 2, 3]
    assert summarise(read(path)).malformed == 5


def test_an_invalid_run_name_is_refused_once(fixtures: Path) -> None:
    with pytest.raises(CorpusError, match="not a valid run id"):
        read(fixtures / "hook_single.json", run="../etc")

"""Input that changes or fails under the reader: a file deleted between the listing and the read is a
counted skip named by its path, a file that cannot be opened is named as not read, and every other file is
still read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ouroboros_gates.harness import Reader, collect, expand, stats_of, unread_files

RUN = '{"type": "system", "subtype": "init", "session_id": "s1"}\n'


def _corpus(tmp_path: Path) -> tuple[Path, Path, Path]:
    kept, gone = tmp_path / "corpus" / "kept", tmp_path / "corpus" / "gone"
    for folder in (kept, gone):
        folder.mkdir(parents=True)
        (folder / "events.jsonl").write_text(RUN * 3)
    return tmp_path / "corpus", kept, gone


def test_a_run_deleted_after_the_listing_is_a_counted_skip(tmp_path: Path) -> None:
    corpus, _kept, gone = _corpus(tmp_path)
    listed = expand([corpus])
    shutil.rmtree(gone)  # deleted between the listing and the read
    found = stats_of(listed)
    assert found.vanished == [str(gone / "events.jsonl")]
    assert {run.run: run.lines for run in found.runs} == {"gone": 0, "kept": 3}
    assert found.total.malformed_count == 0 and found.unread == []
    assert found.to_json()["total"]["vanished"] == [str(gone / "events.jsonl")]


def test_one_file_of_a_run_deleted_leaves_the_others_read(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        (folder / name).write_text(RUN * 2)
    listed = expand([folder])
    (folder / "a.jsonl").unlink()
    [run] = stats_of(listed).runs
    assert run.vanished == [str(folder / "a.jsonl")] and run.lines == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_file_that_cannot_be_opened_is_named_and_the_rest_is_read(tmp_path: Path) -> None:
    corpus, kept, gone = _corpus(tmp_path)
    (gone / "events.jsonl").chmod(0)
    found = collect([corpus])
    assert [str(bad) for bad in found.unread] == [
        f"{gone / 'events.jsonl'}: not read: cannot read: Permission denied"
    ]
    assert [bad.file for bad in unread_files([gone / "events.jsonl", kept / "events.jsonl"])] == [
        str(gone / "events.jsonl")
    ]
    assert {run.run: run.lines for run in found.runs}["kept"] == 3


def test_unread_files_names_what_holds_no_known_format_from_its_first_objects(tmp_path: Path) -> None:
    log, notes, empty = tmp_path / "log.jsonl", tmp_path / "notes.jsonl", tmp_path / "empty.jsonl"
    log.write_text(RUN)
    notes.write_text('{"foo": 1, "bar": 2}\n' * 3)
    empty.write_text("")
    listed = unread_files([log, notes, empty, tmp_path / "deleted.jsonl"])
    # a log is read, an empty file holds nothing to name, a deleted one is a skip (not an error)
    assert [(Path(bad.file).name, bad.keys, bad.error) for bad in listed] == [
        ("notes.jsonl", ["bar", "foo"], None)
    ]
    assert "expected CSF envelope lines" in str(listed[0])
    # the same file as the whole read names it
    assert [bad.file for bad in collect([notes]).unread] == [str(notes)]


def test_a_reader_given_a_file_it_cannot_open_names_it_and_reads_the_next(tmp_path: Path) -> None:
    folder = tmp_path / "odd.jsonl"  # a folder where a file was listed: open() fails, whoever runs this
    folder.mkdir()
    log = tmp_path / "log.jsonl"
    log.write_text(RUN * 2)
    reader = Reader([folder, log], "r")
    assert len(list(reader)) == 2 and reader.lines == 2
    assert [str(bad) for bad in reader.unread] == [f"{folder}: not read: cannot read: Is a directory"]
    assert reader.vanished == [] and reader.malformed_count == 0

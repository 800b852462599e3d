"""The main job on runs that change under it: a session file still being written is recorded as it stood,
waited for by the content the worker read, and ingested again when it grows; a run deleted before it is read
is a counted skip with its path."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from fleet_support import ROOT, run
from rich.console import Console

from ouroboros_gates.events import open_store
from ouroboros_gates.ops.embedded import SharedFleet
from ouroboros_gates.ops.ingest import ingest_messages
from ouroboros_gates.ops.loop.main import _ingest_and_mine
from ouroboros_gates.schemas.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(420)]
SOURCE = sorted((ROOT / "examples" / "runs").glob("*/events.jsonl"))[0]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in {"OURO_DATABASE_URL", "OURO_BROKER_URL", "OURO_FORGE"}
    }
    return {**env, "OURO_STATE": str(tmp_path / "state"), "OURO_ROOTS": str(tmp_path)}


def _runs(stdout: str) -> dict[str, dict[str, object]]:
    """The rows of ``ouro loop --json``'s table of the runs ingested, by run."""
    report = json.loads(stdout)["report"]
    table = next(item for item in report if item.get("table") == "Runs ingested")
    return {row["run"]: row for row in table["rows"]}


def test_a_run_still_being_written_is_recorded_then_ingested_again_when_it_grows(tmp_path: Path) -> None:
    run_dir = tmp_path / "corpus" / "growing-run"
    run_dir.mkdir(parents=True)
    complete = SOURCE.read_text().splitlines(keepends=True)
    log = run_dir / "events.jsonl"
    log.write_text("".join(complete[:-1]) + complete[-1][: len(complete[-1]) // 2])  # the writer is mid-line
    first = run("loop", str(tmp_path / "corpus"), "--json", env=_env(tmp_path))
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    # read up to its last complete line: the half line is neither a line nor a malformed one yet
    rows = _runs(first.stdout)
    assert (rows["growing-run"]["lines"], rows["growing-run"]["malformed"]) == (len(complete) - 1, 0)
    log.write_text("".join(complete) + "".join(complete[1:3]))  # the line finished, two more written
    second = run("loop", str(tmp_path / "corpus"), "--json", env=_env(tmp_path))
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-2000:]
    rows = _runs(second.stdout)
    # ingested again, its new record replacing the last: counted once, whole
    assert (rows["growing-run"]["lines"], rows["growing-run"]["malformed"]) == (len(complete) + 2, 0)
    assert rows["total"]["lines"] == len(complete) + 2


def test_the_loop_waits_for_the_mine_of_what_the_worker_read(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus" / "race-run"
    corpus.mkdir(parents=True)
    shutil.copyfile(SOURCE, corpus / "events.jsonl")
    settings = Settings(state=tmp_path / "state", roots=str(tmp_path))
    messages = ingest_messages([corpus], settings)  # ids from the content now...
    with (corpus / "events.jsonl").open(
        "a"
    ) as more:  # ...then the session writes on before a worker reads it
        more.write(json.dumps({"type": "system", "subtype": "note", "session_id": "race-run"}) + "\n")
    os.environ["OURO_STATE"], os.environ["OURO_ROOTS"] = str(tmp_path / "state"), str(tmp_path)
    store = open_store(settings.event_log_url)
    shared = SharedFleet(settings)
    try:
        assert _ingest_and_mine(store, settings, messages, shared, Console(file=open(os.devnull, "w")))  # noqa: SIM115
    finally:
        shared.close()
        for key in ("OURO_STATE", "OURO_ROOTS"):
            os.environ.pop(key, None)
    mined = [e for e in store.read_stream("findings/race-run")] + [
        e for e in store.read_stream("run/race-run") if e.type == "RunRecorded"
    ]
    assert mined, "the run was recorded and mined"


def test_a_run_deleted_before_it_is_read_is_a_counted_skip(tmp_path: Path) -> None:
    kept, gone = tmp_path / "kept", tmp_path / "gone"
    for folder in (kept, gone):
        folder.mkdir()
        shutil.copyfile(SOURCE, folder / "events.jsonl")
    listed = [kept, gone]
    shutil.rmtree(gone)  # deleted between the listing and the read
    vanished: list[Path] = []
    messages = ingest_messages(listed, Settings(state=tmp_path / "state"), vanished)
    assert [m.run for m in messages] == ["kept"] and vanished == [gone]

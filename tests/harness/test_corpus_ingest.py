"""Ingest reads a run in any format: a harness events.jsonl, or a Claude Code transcript file."""

from __future__ import annotations

import shutil
from pathlib import Path

from ouroboros_gates.schemas import IngestRun
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.miner.ingest import ingest_run


def _settings(tmp_path: Path) -> Settings:
    return Settings(state=tmp_path / "state", roots=str(tmp_path))


def test_a_transcript_file_is_a_run(fixtures: Path, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    shutil.copyfile(fixtures / "transcript_session.jsonl", path)
    message = IngestRun(message_id="ingest-transcript-1", path=str(path), run="session", tenant="default")
    recorded = ingest_run(message, _settings(tmp_path))
    summary = recorded.summary
    assert (summary.lines, summary.malformed, summary.tool_calls, summary.tool_errors) == (11, 0, 2, 1)
    assert summary.usage.output_tokens == 95 + 40 and summary.cost_usd is None


def test_a_run_directory_is_still_its_events_jsonl(fixtures: Path, tmp_path: Path) -> None:
    run = tmp_path / "envelope_run"
    shutil.copytree(fixtures / "envelope_run", run)
    recorded = ingest_run(
        IngestRun(message_id="ingest-envelope-2", path=str(run), run="envelope_run", tenant="default"),
        _settings(tmp_path),
    )
    assert recorded.path == str((run / "events.jsonl").resolve())
    assert (recorded.summary.tool_calls, recorded.summary.tool_errors, recorded.summary.cost_usd) == (
        2,
        1,
        0.3,
    )


def test_a_project_folder_of_transcripts_is_one_run_per_session(fixtures: Path, tmp_path: Path) -> None:
    from ouroboros_gates.ops.ingest import expand_runs, ingest_messages
    from ouroboros_gates.workers.miner.ingest import run_digest

    project = tmp_path / "projects" / "-home-user-shop"
    project.mkdir(parents=True)
    shutil.copyfile(fixtures / "transcript_session.jsonl", project / "a.jsonl")
    shutil.copyfile(fixtures / "transcript_sidechain.jsonl", project / "b.jsonl")
    settings = _settings(tmp_path)
    paths = expand_runs([str(tmp_path / "projects")])
    messages = ingest_messages(paths, settings)
    # Named by the sessionId their lines carry, not by the files' stems.
    assert [(m.run, Path(m.path).name) for m in messages] == [
        ("5f0c9a52-1111-4c3e-9d0a-6c0b7e2a9a01", "a.jsonl"),
        ("0c1d2e3f-3333-4a4b-9c9d-2e3f4a5b6c03", "b.jsonl"),
    ]
    recorded = [ingest_run(message, settings) for message in messages]
    assert [r.digest for r in recorded] == [run_digest(path) for path in paths]
    assert [(r.summary.lines, r.summary.tool_calls, r.summary.tool_errors) for r in recorded] == [
        (11, 2, 1),  # its last line is still being written
        (6, 3, 1),
    ]
    (project / "b.jsonl").write_text((fixtures / "transcript_sidechain.jsonl").read_text() + "\n")
    assert ingest_messages(paths, settings)[1].message_id != messages[1].message_id  # changed content, new id

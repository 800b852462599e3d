"""Ingest reads a run in any format: a harness events.jsonl, or a Claude Code transcript file."""

from __future__ import annotations

import shutil
from pathlib import Path

from events import Settings
from schemas import IngestRun
from workers.miner.ingest import ingest_run


def _settings(tmp_path: Path) -> Settings:
    return Settings(state=tmp_path / "state", roots=str(tmp_path))


def test_a_transcript_file_is_a_run(fixtures: Path, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    shutil.copyfile(fixtures / "transcript_session.jsonl", path)
    message = IngestRun(message_id="ingest-transcript-1", path=str(path), run="session", tenant="default")
    recorded = ingest_run(message, _settings(tmp_path))
    summary = recorded.summary
    assert (summary.lines, summary.malformed, summary.tool_calls, summary.tool_errors) == (12, 1, 2, 1)
    assert summary.usage.output_tokens == 95 + 40 and summary.cost_usd is None


def test_a_run_directory_is_still_its_events_jsonl(fixtures: Path, tmp_path: Path) -> None:
    run = tmp_path / "envelope_run"
    shutil.copytree(fixtures / "envelope_run", run)
    recorded = ingest_run(
        IngestRun(message_id="ingest-envelope-2", path=str(run), run="envelope_run", tenant="default"),
        _settings(tmp_path),
    )
    assert recorded.path == str((run / "events.jsonl").resolve())
    assert (recorded.summary.tool_calls, recorded.summary.tool_errors, recorded.summary.cost_usd) == (2, 1, 0.3)

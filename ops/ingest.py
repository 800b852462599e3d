"""Turning paths given on the command line into ``IngestRun`` messages."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from events import Settings
from events.corpus import expand, run_name
from schemas import IngestRun, content_id
from workers.miner.ingest import run_digest

__all__ = ["expand_runs", "ingest_messages"]


def expand_runs(items: Iterable[str]) -> list[Path]:
    """Runs named by files, run directories, directories of runs, folders of transcripts or quoted globs."""
    return sorted(dict.fromkeys(run.path.resolve() for run in expand(items)))


def ingest_messages(paths: Iterable[Path], settings: Settings) -> list[IngestRun]:
    """One message per run; the id follows the run's content, so a repeat is recognised."""
    messages = []
    for path in paths:
        run = run_name(path)
        messages.append(
            IngestRun(
                message_id=content_id("ingest", run, run_digest(path)), path=str(path), run=run, tenant=settings.tenant
            )
        )
    return messages

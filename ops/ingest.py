"""Turning paths given on the command line into ``IngestRun`` messages."""

from __future__ import annotations

import glob
from collections.abc import Iterable
from pathlib import Path

from events import CorpusError, Settings
from schemas import IngestRun, content_id
from workers.miner.ingest import file_digest

__all__ = ["expand_runs", "ingest_messages"]


def expand_runs(items: Iterable[str]) -> list[Path]:
    """Run files named by paths, run directories, directories of runs, or quoted globs."""
    found: list[Path] = []
    for item in items:
        matches = sorted(glob.glob(item)) if any(ch in item for ch in "*?[") else [item]
        if not matches:
            raise CorpusError(f"{item}: matches nothing")
        for match in matches:
            found.extend(_runs_under(Path(match)))
    return sorted(dict.fromkeys(path.resolve() for path in found))


def _runs_under(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if (path / "events.jsonl").is_file():
        return [path / "events.jsonl"]
    if path.is_dir():
        nested = sorted(path.glob("*/events.jsonl")) or sorted(path.glob("runs/*/events.jsonl"))
        if nested:
            return nested
    raise CorpusError(f"{path}: not a run (no events.jsonl)")


def ingest_messages(paths: Iterable[Path], settings: Settings) -> list[IngestRun]:
    """One message per run file; the id follows the file's content, so a repeat is recognised."""
    messages = []
    for path in paths:
        run = path.parent.name if path.name == "events.jsonl" else path.stem
        digest = file_digest(path)
        messages.append(
            IngestRun(message_id=content_id("ingest", run, digest), path=str(path), run=run, tenant=settings.tenant)
        )
    return messages

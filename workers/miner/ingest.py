"""Ingest one harness run: read it, summarise it, and record it once per file content.

A run is a run directory's ``events.jsonl`` or one harness log file in any format the corpus readers
detect (CSF envelope, stream-json, a Claude Code transcript, hook payloads).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from events import PermanentError, Settings
from events.corpus import read, summarise
from schemas import IngestRun, MineRun, RunRecorded, content_id

__all__ = ["confine", "file_digest", "ingest_run", "mine_message"]


def file_digest(path: Path) -> str:
    """sha256 of a file, read in chunks (runs can be large)."""
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            sha.update(chunk)
    return sha.hexdigest()


def confine(path: str, settings: Settings) -> Path:
    """Resolve a path from a message, refusing anything outside the configured roots."""
    resolved = Path(path).expanduser().resolve()
    roots = settings.allowed_roots
    if not any(resolved.is_relative_to(root) for root in roots):
        shown = ", ".join(str(root) for root in roots)
        raise PermanentError(f"path {path!r} is outside the configured roots ({shown}): set OURO_ROOTS")
    return resolved


def ingest_run(message: IngestRun, settings: Settings) -> RunRecorded:
    """Read the run the message names and return the event that records it."""
    path = confine(message.path, settings)
    file = path / "events.jsonl" if path.is_dir() else path
    if not file.is_file():
        raise PermanentError(f"{message.path}: no events.jsonl to ingest")
    reader = read(file, run=message.run)
    summary = summarise(reader)
    return RunRecorded(run=message.run, path=str(file), summary=summary, digest=file_digest(file))


def mine_message(message: IngestRun, digest: str) -> MineRun:
    """The follow-up that mines a run once it is recorded; its id follows the run's content."""
    return MineRun(
        message_id=content_id("mine", message.run, digest),
        correlation_id=message.correlation_id or message.message_id,
        causation_id=message.message_id,
        tenant=message.tenant,
        run=message.run,
    )

"""Ingest one harness run: read it, summarise it, and record it once per file content.

A run is a run directory's ``events.jsonl``, one harness log file in any format the corpus readers
detect (CSF envelope, stream-json, a Claude Code transcript, hook payloads), a Claude Code session (its
transcript, or its folder, with its subagents' transcripts), or a folder of such files, read in name
order: whatever ``harness.run_at`` makes of the path.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ouroboros_gates.harness import read, run_at, summarise
from ouroboros_gates.schemas import IngestRun, MineRun, RunRecorded, content_id
from ouroboros_gates.schemas.errors import CorpusError, PermanentError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.paths import confine

__all__ = ["file_digest", "ingest_run", "mine_message", "run_digest", "run_paths"]


def file_digest(path: Path) -> str:
    """sha256 of a file, read in chunks (runs can be large)."""
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            sha.update(chunk)
    return sha.hexdigest()


def run_paths(path: Path) -> tuple[Path, ...]:
    """The files a run is read from: the file itself (a session's with its subagents'), or a run
    directory's."""
    return run_at(path).files


def run_digest(path: Path) -> str:
    """The content digest of a run: its file's sha256, or one over every file of a folder of logs."""
    files = run_paths(path)
    if len(files) == 1:
        return file_digest(files[0])
    sha = hashlib.sha256()
    for file in files:
        sha.update(f"{file.name}\0{file_digest(file)}\n".encode())
    return sha.hexdigest()


def ingest_run(message: IngestRun, settings: Settings) -> RunRecorded:
    """Read the run the message names and return the event that records it."""
    path = confine(message.path, settings)
    files = _run_files(message, path, settings)
    recorded = files[0] if len(files) == 1 else path  # a run directory's events.jsonl is recorded as the file
    try:
        summary = summarise(read(recorded, run=message.run))
        return RunRecorded(run=message.run, path=str(recorded), summary=summary, digest=run_digest(recorded))
    except FileNotFoundError as exc:  # deleted while it was read: retrying cannot bring it back
        raise PermanentError(
            f"{message.path}: a file of the run vanished while it was read ({exc.filename})"
        ) from exc


def _run_files(message: IngestRun, path: Path, settings: Settings) -> tuple[Path, ...]:
    """The files of the run at ``path``, each confined; ``PermanentError`` when it has none."""
    try:  # ``<project>/<sessionId>`` names a session of several transcripts: a path that is no file
        files = run_paths(path)
    except CorpusError:
        files = ()
    for file in files:  # a session folder's main transcript lies beside it: every file read is confined too
        confine(str(file), settings)
    if not files:
        raise PermanentError(
            f"{message.path}: no harness log to ingest (events.jsonl, *.jsonl, *.ndjson, *.json)"
        )
    return files


def mine_message(message: IngestRun, digest: str, path: str | None = None) -> MineRun:
    """The follow-up that mines a run once it is recorded (at ``path``, as recorded; the message's path if not
    given); its id follows the run's content."""
    return MineRun(
        message_id=content_id("mine", message.run, digest),
        correlation_id=message.correlation_id or message.message_id,
        causation_id=message.message_id,
        tenant=message.tenant,
        run=message.run,
        path=message.path if path is None else path,
        digest=digest,
    )

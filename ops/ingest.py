"""Turning paths given on the command line into ``IngestRun`` messages."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ouroboros_gates.harness import Unread, expand, run_at, unread_files
from ouroboros_gates.schemas import IngestRun, content_id
from ouroboros_gates.schemas.errors import CorpusError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.miner.ingest import run_digest

__all__ = ["SendReport", "expand_runs", "ingest_messages", "send_runs"]


@dataclass(frozen=True)
class SendReport:
    """What ``send_runs`` did: the runs queued now, those queued before, and how many it published."""

    queued: tuple[IngestRun, ...]
    already: tuple[IngestRun, ...]
    published: int


def send_runs(messages: Sequence[IngestRun], settings: Settings) -> SendReport:
    """Queue the messages in the event log's outbox and publish them (``workers.shell.send_through_outbox``):
    a message the broker refuses or loses is published again by the outbox sweep, not dropped."""
    from ouroboros_gates.events import open_store
    from ouroboros_gates.workers.app import build_app
    from ouroboros_gates.workers.shell import send_through_outbox

    store = open_store(settings.event_log_url)
    try:
        entries, published = send_through_outbox(
            store, messages, "ouroboros_gates.ops.ingest", build_app(settings, include=False)
        )
    finally:
        store.close()
    return _report(messages, {entry.message_id for entry in entries}, published)


def _report(messages: Sequence[IngestRun], fresh: set[str], published: int) -> SendReport:
    """The messages the outbox took now (``fresh``) and those it held before, in order."""
    return SendReport(
        tuple(m for m in messages if m.message_id in fresh),
        tuple(m for m in messages if m.message_id not in fresh),
        published,
    )


def expand_runs(items: Iterable[str]) -> list[Path]:
    """Runs named by files, run directories, directories of runs, Claude Code projects folders (a run per
    session) or quoted globs: each the path ``harness.run_at`` reads that run back from."""
    return sorted(dict.fromkeys(run.path.resolve() for run in expand(items)))


def ingest_messages(
    paths: Iterable[Path],
    settings: Settings,
    vanished: list[Path] | None = None,
    unread: list[Unread] | None = None,
) -> list[IngestRun]:
    """One message per run; the id follows the run's content, so a repeat is recognised (and a run that grew
    since, a session still being written, is ingested again, its record replacing the last).

    A run whose files are gone by the time it is read (deleted since it was listed) is skipped, and added to
    ``vanished`` when given. A file that cannot be opened, or whose objects are of no known format, is added
    to ``unread`` when given: a run with such a file is still queued when it has others to read, skipped
    when none of its files can be read."""
    messages = []
    for path in paths:
        try:
            found = _readable(path, unread)
        except (FileNotFoundError, CorpusError):
            if path.exists():  # unreadable for another reason: that error is the user's to see
                raise
            if vanished is not None:
                vanished.append(path)
            continue
        if found is not None:
            run, digest = found
            message_id = content_id("ingest", run, digest)
            messages.append(IngestRun(message_id=message_id, path=str(path), run=run, tenant=settings.tenant))
    return messages


def _readable(path: Path, unread: list[Unread] | None) -> tuple[str, str] | None:
    """The run's name and content digest; None (its files named in ``unread``) when none of its files can
    be read, or one cannot be opened. Without ``unread`` every run is queued, as the worker will read it."""
    found = run_at(path)
    if unread is None:
        return found.name, run_digest(path)
    bad = unread_files(found.files)
    unread.extend(bad)
    if _is_skipped(bad, len(found.files)):
        return None
    return found.name, run_digest(path)


def _is_skipped(bad: list[Unread], files: int) -> bool:
    """Whether a run is skipped for its unread files: none of its ``files`` can be read, or one cannot be
    opened."""
    return (bool(bad) and len(bad) == files) or any(item.error for item in bad)

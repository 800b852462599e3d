"""Handing hook-recorded runs to the fleet: the spool and its flush (``ouro hook --flush``).

The hook never publishes: a Celery publish from a fresh process costs about as much as a tool call
should wait in all, and a broker that is down must not stall the agent. Each hook call appends one
line to ``<state>/spool/hooks.jsonl`` naming the run whose log changed (``record.spool_entry``). A
flush renames that file to ``draining-<ns>-<pid>.jsonl`` (under its lock, so a hook that waited for
it writes to the next file), publishes one ``IngestRun`` per run named in every draining file (its
message id follows the run's content, so a repeat is recognised by the fleet), and deletes the files
only when every publish went through. When the broker is down nothing is lost: the files stay and
the next flush publishes them. Every run is queued into the state it was recorded in: the embedded broker
and event log of ``<state>`` (``--state`` as the hook was given it), never those of the working directory.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ouroboros_gates.ops.gate.paths import SPOOL_DIR, spool_path

if TYPE_CHECKING:
    from ouroboros_gates.schemas import IngestRun
    from ouroboros_gates.schemas.settings import Settings

__all__ = ["FlushReport", "flush"]


@dataclass(frozen=True)
class FlushReport:
    """What a flush did: runs published, spool lines still waiting, and the error that kept them."""

    published: tuple[str, ...]
    kept_lines: int
    error: str | None = None
    busy: bool = False


def _take_spool(state: Path) -> None:
    """Move the live spool file aside for draining (hooks then start a new one)."""
    live = Path(spool_path(str(state)))
    if not live.exists():
        return
    with live.open("ab") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        if live.exists() and os.path.samestat(os.fstat(handle.fileno()), live.stat()):
            live.rename(live.with_name(f"draining-{time.time_ns()}-{os.getpid()}.jsonl"))


def _runs(files: list[Path]) -> tuple[dict[str, Path], int]:
    runs: dict[str, Path] = {}
    lines = 0
    for path in files:
        for raw in path.read_bytes().splitlines():
            lines += 1
            try:
                entry = json.loads(raw)
                runs[str(entry["run"])] = Path(str(entry["path"]))
            except (ValueError, KeyError, TypeError):
                continue  # a torn or foreign line names no run
    return runs, lines


def flush(state: Path, publish: Callable[[IngestRun], None] | None = None) -> FlushReport:
    """Publish an ``IngestRun`` for every spooled run; keep the spool when the broker refuses."""
    from ouroboros_gates.ops.ingest import ingest_messages
    from ouroboros_gates.schemas.settings import load_settings

    spool = state / SPOOL_DIR
    spool.mkdir(parents=True, exist_ok=True)
    with (spool / ".flush.lock").open("a") as guard:
        try:
            fcntl.flock(guard, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return FlushReport((), 0, busy=True)
        _take_spool(state)
        files = sorted(spool.glob("draining-*.jsonl"))
        runs, lines = _runs(files)
        present = [path for path in runs.values() if path.is_file()]
        settings = load_settings(state=state)
        messages = ingest_messages(present, settings)
        send = publish or _publisher(settings)
        published: list[str] = []
        for message in messages:
            try:
                send(message)
            except Exception as exc:  # the broker's errors vary by transport; every one keeps the spool
                return FlushReport(tuple(published), lines, f"{type(exc).__name__}: {exc}"[:300])
            published.append(message.run)
        for path in files:
            path.unlink(missing_ok=True)
        return FlushReport(tuple(published), 0)


def _publisher(settings: Settings) -> Callable[[IngestRun], None]:
    """Publishing on the broker of ``settings`` (the state's own), not the process's default app."""
    from ouroboros_gates.workers import build_app, publish

    via = build_app(settings, include=False)
    return lambda message: publish(message, via=via)

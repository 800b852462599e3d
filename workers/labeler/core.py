"""The labeler as one call: tickets in, a finished run out, with the events it appends.

Shared by the ``labeler.label`` task and ``ouro label``: the runs to search are those under the state
directory and those the log recorded; tickets are read through the forge; the model and the GPU sharing
come from the settings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.exc import SQLAlchemyError

from ouroboros_gates.events import LedgerStore, StreamWrite
from ouroboros_gates.events.projections.runs import runs as runs_table
from ouroboros_gates.forge import Forge
from ouroboros_gates.schemas import Event, LabelerRunCompleted, LabelProposed, LabelRequest
from ouroboros_gates.schemas.errors import TransientError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.labeler.client import chat_from_settings
from ouroboros_gates.workers.labeler.gpu import sharing_from_settings
from ouroboros_gates.workers.labeler.request import complete
from ouroboros_gates.workers.labeler.run import Labeler, Plan, RunResult
from ouroboros_gates.workers.labeler.sources import miner_reproducer, sources_for

__all__ = ["known_runs", "label_tickets", "run_events"]


def known_runs(settings: Settings, store: LedgerStore | None = None) -> dict[str, Path]:
    """Run id -> ``events.jsonl`` of every run under the state directory (``runs/<run>/``, where the hook
    records sessions, and ``<run>/``, where it did before) and every run the log recorded."""
    found = _state_runs(settings.state_dir)
    if store is not None:
        for run, path in _recorded_runs(store, settings.state_dir):
            found.setdefault(run, path)
    return found


def _state_runs(state_dir: Path) -> dict[str, Path]:
    """Run id -> ``events.jsonl`` of each run directory under the state directory, in either layout."""
    layouts = ("*/events.jsonl", "runs/*/events.jsonl")
    return {path.parent.name: path for pattern in layouts for path in sorted(state_dir.glob(pattern))}


def _recorded_runs(store: LedgerStore, state_dir: Path) -> list[tuple[str, Path]]:
    """The runs the log recorded whose file is still there (a relative path is under the state directory),
    by run id."""
    found = []
    for run, recorded in _ledger_runs(store):
        path = Path(recorded)
        path = path if path.is_absolute() else state_dir / path
        if path.is_file():
            found.append((str(run), path))
    return found


def _ledger_runs(store: LedgerStore) -> Sequence[Row[Any, Any]]:
    """The runs ledger's ``(run, path)`` rows; none while the ledger is not built yet."""
    try:
        with store.reading() as conn:
            return conn.execute(select(runs_table.c.run, runs_table.c.path).order_by(runs_table.c.run)).all()
    except (SQLAlchemyError, TransientError):
        return []  # the ledger is not built yet: the state directory's runs are all there is


def label_tickets(
    settings: Settings,
    tickets: Sequence[int],
    forge: Forge,
    runs: Mapping[str, Path],
    requests: Mapping[int, LabelRequest] | None = None,
) -> RunResult:
    """One labeler run over ``tickets``: each request completed from its ticket, prefiltered, labelled,
    accepted."""
    chat, model, client = chat_from_settings(settings)
    endpoint_url = client.endpoint.base_url if client is not None else None
    sharing, sharing_note = sharing_from_settings(settings, endpoint_url)
    plans = []
    for number in tickets:
        job = complete((requests or {}).get(number), forge.ticket(number))
        sources, notes = sources_for(job, runs, forge)
        reproduce, how = miner_reproducer(job, runs)
        plans.append(Plan(job, sources, reproduce, (*notes, how)))
    labeler = Labeler(
        chat=chat,
        model=model,
        sharing=sharing,
        state_dir=settings.state_dir,
        batch_size=settings.labeler_batch,
        max_candidates=settings.labeler_candidates,
    )
    try:
        return labeler.run(plans, sharing_note)
    finally:
        if client is not None:
            client.close()
        if sharing.engine is not None:
            sharing.engine.close()


def run_events(result: RunResult) -> list[StreamWrite]:
    """The events of a finished run: each label on its ticket's stream ``ticket/<n>``, the run record on
    ``labeler``."""
    by_ticket: dict[int, list[Event]] = {}
    for label in result.labels:
        by_ticket.setdefault(label.ticket, []).append(LabelProposed(label=label))
    writes = [StreamWrite(f"ticket/{t}", events) for t, events in sorted(by_ticket.items())]
    writes.append(StreamWrite("labeler", [LabelerRunCompleted(labeler_run=result.record)]))
    return writes

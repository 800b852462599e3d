"""``ouro label``'s work: the labeler by hand over some tickets (else the queued requests), in this process,
its labels and run recorded in the event log.

Each ticket is completed from its queued request (the ledger's latest ``LabelRequested``) when there is one,
else from the ticket alone; the labels go to ``<state>/labeler.jsonl``, the run to ``<state>/labeler.json``
(the labeler's own files) and both to the event log.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from ouroboros_gates.events import LedgerStore, Metadata
from ouroboros_gates.events.projections.labels import label_requests
from ouroboros_gates.forge import Forge
from ouroboros_gates.harness import expand
from ouroboros_gates.schemas import LabelRequest, content_id
from ouroboros_gates.schemas.errors import OuroError, TransientError
from ouroboros_gates.schemas.settings import Settings

if TYPE_CHECKING:
    from ouroboros_gates.workers.labeler import RunResult

__all__ = ["label_here", "queued_requests"]


def queued_requests(store: LedgerStore) -> dict[int, LabelRequest]:
    """The latest queued request of each ticket in the ledger."""
    try:
        with store.reading() as conn:
            rows = conn.execute(select(label_requests).order_by(label_requests.c.position)).mappings().all()
    except (SQLAlchemyError, TransientError):
        return {}
    found: dict[int, LabelRequest] = {}
    for row in rows:
        found[int(row["ticket"])] = LabelRequest(
            ticket=row["ticket"],
            proposal=row["proposal"],
            miner=row["miner"],
            corpus=tuple(row["corpus"]),
            instances=tuple(row["instances"]),
            reason=row["reason"],
            at=row["at"],
        )
    return found


def label_here(
    settings: Settings,
    store: LedgerStore,
    tickets: Sequence[int],
    runs: Sequence[str],
    forge: Callable[[], Forge],
) -> RunResult:
    """Label ``tickets`` (none: every ticket with a queued request) over ``runs`` (files, run directories,
    globs; none: the state's runs) with the local model, and record the run. ``forge`` opens the forge, once
    there is a ticket to label."""
    from ouroboros_gates.workers.labeler import label_tickets, run_events

    queued = queued_requests(store)
    chosen = list(dict.fromkeys(tickets or sorted(queued)))
    if not chosen:
        raise OuroError("no tickets: give --ticket N or --tickets-file F (the labeler's queue is empty)")
    result = label_tickets(settings, chosen, forge(), _runs(settings, store, runs), queued)
    message_id = content_id("label", chosen, result.record.started.isoformat())
    store.commit(
        run_events(result), Metadata(producer="labeler.label", message_id=message_id, tenant=settings.tenant)
    )
    return result


def _runs(settings: Settings, store: LedgerStore, patterns: Sequence[str]) -> dict[str, Path]:
    from ouroboros_gates.workers.labeler import known_runs

    if not patterns:
        return known_runs(settings, store)
    try:
        return {run.name: run.files[0] for run in expand(list(patterns)) if run.files}
    except OuroError as exc:
        raise OuroError(f"--runs: {exc}") from exc

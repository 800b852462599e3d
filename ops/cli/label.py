"""``ouro label``: the labeler by hand, over some tickets, in this process.

    ouro label --ticket 44 --ticket 48            # or --tickets-file landed.tsv; neither: the queued requests
    ouro label --ticket 44 --runs 'examples/runs/*/events.jsonl'

Each ticket is completed from its queued request (the ledger's latest ``LabelRequested``) when there is
one, else from the ticket alone. The labels go to ``<state>/labeler.jsonl``, the run to
``<state>/labeler.json``, and both to the event log; one row per label is printed, with why.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from ouroboros_gates.events import Metadata, SqlEventStore, open_store
from ouroboros_gates.events.projections.labels import label_requests
from ouroboros_gates.harness import expand
from ouroboros_gates.ops.cli._common import UsageError, opened_forge
from ouroboros_gates.schemas import LabelRequest, content_id
from ouroboros_gates.schemas.errors import OuroError
from ouroboros_gates.schemas.settings import Settings, load_settings

if TYPE_CHECKING:
    from ouroboros_gates.workers.labeler import RunResult

__all__ = ["label", "read_tickets_file"]

console = Console()
_TICKET = re.compile(r"^#?([0-9]+)$")


def read_tickets_file(path: Path) -> list[int]:
    """Ticket numbers from the first column of a TSV (``N`` or ``#N``); blank and ``#`` comment lines and a
    header line are skipped; anything else is an error naming ``file:line``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--tickets-file: cannot read {path}: {exc.strerror or exc}") from exc
    tickets: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        first = line.split("\t", 1)[0].strip()
        if not first or (first.startswith("#") and not _TICKET.match(first)):
            continue
        match = _TICKET.match(first)
        if match is None:
            if number == 1 and not tickets:
                continue  # a header
            raise UsageError(f"{path}:{number}: {first!r} is not a ticket number")
        tickets.append(int(match.group(1)))
    if not tickets:
        raise UsageError(f"{path}: no ticket numbers")
    return list(dict.fromkeys(tickets))


def _queued(store: SqlEventStore) -> dict[int, LabelRequest]:
    """The latest queued request of each ticket in the ledger."""
    try:
        with store.engine.connect() as conn:
            rows = conn.execute(select(label_requests).order_by(label_requests.c.position)).mappings().all()
    except SQLAlchemyError:
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


def _runs(settings: Settings, store: SqlEventStore, patterns: list[str]) -> dict[str, Path]:
    from ouroboros_gates.workers.labeler import known_runs

    if not patterns:
        return known_runs(settings, store)
    try:
        return {run.name: run.files[0] for run in expand(patterns) if run.files}
    except OuroError as exc:
        raise UsageError(f"--runs: {exc}") from exc


def _print(result: RunResult) -> None:
    table = Table("ticket", "instance", "line", "label", "acceptance", "why")
    for label in result.labels:
        acceptance = label.acceptance.value.removeprefix("ACCEPTANCE_").lower()
        table.add_row(
            f"#{label.ticket}",
            label.instance,
            f"{label.span.file}:{label.span.line}" if label.span.file.startswith("#") else str(label.span.line),
            "+" if label.positive else "-",
            acceptance,
            label.why,
        )
    if result.labels:
        console.print(table)
    run = result.record
    console.print(
        f"labeler {run.status.value}: {len(run.tickets)} ticket(s), {run.candidates} candidate(s), "
        f"{run.batches} batch(es) ({run.failed_batches} failed), {run.accepted} accepted, {run.rejected} rejected, "
        f"model {run.model}, keep-alive {run.keep_alive_s:g} s"
    )
    for note in run.notes:
        console.print(f"  {note}", markup=False, highlight=False)


def label(
    ticket: Annotated[list[int] | None, typer.Option("--ticket", help="A ticket to label (repeatable).")] = None,
    tickets_file: Annotated[
        Path | None, typer.Option("--tickets-file", help="A TSV whose first column is ticket numbers.")
    ] = None,
    runs: Annotated[
        list[str] | None,
        typer.Option("--runs", help="Runs to search (files, run directories, globs); default: the state's runs."),
    ] = None,
) -> None:
    """Label tickets with the local model: prefilter, label in batches, accept only what reproduces."""
    from ouroboros_gates.workers.labeler import (  # the fleet is imported only when a command runs
        label_tickets,
        run_events,
    )

    settings = load_settings("labeler")
    store = open_store(settings.event_log_url)
    queued = _queued(store)
    tickets = list(ticket or [])
    if tickets_file is not None:
        tickets += read_tickets_file(tickets_file)
    if not tickets:
        tickets = sorted(queued)
    if not tickets:
        raise UsageError("no tickets: give --ticket N or --tickets-file F (the labeler's queue is empty)")
    tickets = list(dict.fromkeys(tickets))
    forge = opened_forge(settings)
    result = label_tickets(settings, tickets, forge, _runs(settings, store, list(runs or [])), queued)
    message_id = content_id("label", tickets, result.record.started.isoformat())
    store.commit(run_events(result), Metadata(producer="labeler.label", message_id=message_id, tenant=settings.tenant))
    _print(result)

"""``ouro label``: the labeler by hand, over some tickets, in this process.

    ouro label --ticket 44 --ticket 48            # or --tickets-file landed.tsv; neither: the queued requests
    ouro label --ticket 44 --runs 'examples/runs/*/events.jsonl'

Each ticket is completed from its queued request (the ledger's latest ``LabelRequested``) when there is
one, else from the ticket alone. The labels go to ``<state>/labeler.jsonl``, the run to
``<state>/labeler.json``, and both to the event log; one row per label is printed, with why. The work is
``ops.labels.label_here``; this module parses the arguments and prints what it returns.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from ouroboros_gates.ops.cli._common import UsageError, event_store, opened_forge
from ouroboros_gates.ops.cli._output import finish, report_console
from ouroboros_gates.schemas.settings import load_settings

if TYPE_CHECKING:
    from ouroboros_gates.schemas import ProposedLabel
    from ouroboros_gates.workers.labeler import RunResult

__all__ = ["label", "read_tickets_file"]

_TICKET = re.compile(r"^#?([0-9]+)$")


def read_tickets_file(path: Path) -> list[int]:
    """Ticket numbers from the first column of a TSV (``N`` or ``#N``); blank and ``#`` comment lines and a
    header line are skipped; anything else is an error naming ``file:line``."""
    tickets: list[int] = []
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        first = line.split("\t", 1)[0].strip()
        match = _TICKET.match(first)
        if match is not None:
            tickets.append(int(match.group(1)))
        elif not _skipped(first, number, bool(tickets)):
            raise UsageError(f"{path}:{number}: {first!r} is not a ticket number")
    if not tickets:
        raise UsageError(f"{path}: no ticket numbers")
    return list(dict.fromkeys(tickets))


def _read_text(path: Path) -> str:
    """The file's text, or a usage error saying why it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--tickets-file: cannot read {path}: {exc.strerror or exc}") from exc


def _skipped(first: str, number: int, after_ticket: bool) -> bool:
    """Whether a line whose first column is not a ticket number is skipped: blank, a ``#`` comment, or a
    header (the first line, before any ticket)."""
    return not first or first.startswith("#") or (number == 1 and not after_ticket)


def _print(result: RunResult, as_json: bool = False) -> None:
    out = report_console(as_json)
    table = Table("ticket", "instance", "line", "label", "acceptance", "why")
    for label in result.labels:
        table.add_row(*_label_cells(label))
    if result.labels:
        out.print(table)
    run = result.record
    out.print(
        f"labeler {run.status.value}: {len(run.tickets)} ticket(s), {run.candidates} candidate(s), "
        f"{run.batches} batch(es) ({run.failed_batches} failed), {run.accepted} accepted, {run.rejected} "
        "rejected, "
        f"model {run.model}, keep-alive {run.keep_alive_s:g} s"
    )
    for note in run.notes:
        out.print(f"  {note}", markup=False, highlight=False)
    finish(out)


def _label_cells(label: ProposedLabel) -> tuple[str, ...]:
    """One label as the table's cells: the line alone, or with its file when that is a ticket's (``#N``)."""
    acceptance = label.acceptance.value.removeprefix("ACCEPTANCE_").lower()
    return (
        f"#{label.ticket}",
        label.instance,
        f"{label.span.file}:{label.span.line}" if label.span.file.startswith("#") else str(label.span.line),
        "+" if label.positive else "-",
        acceptance,
        label.why,
    )


def label(
    ticket: Annotated[
        list[int] | None, typer.Option("--ticket", help="A ticket to label (repeatable).")
    ] = None,
    tickets_file: Annotated[
        Path | None, typer.Option("--tickets-file", help="A TSV whose first column is ticket numbers.")
    ] = None,
    runs: Annotated[
        list[str] | None,
        typer.Option(
            "--runs", help="Runs to search (files, run directories, globs); default: the state's runs."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Label tickets with the local model: prefilter, label in batches, accept only what reproduces."""
    from ouroboros_gates.ops.labels import label_here

    settings = load_settings("labeler")
    tickets = list(ticket or [])
    if tickets_file is not None:
        tickets += read_tickets_file(tickets_file)
    store = event_store(settings)
    _print(label_here(settings, store, tickets, list(runs or []), lambda: opened_forge(settings)), as_json)

"""``ouro loop`` (the main job), ``ouro close-ticket``, ``ouro train`` and ``ouro fix``.

The workers are imported when a command runs, not when ``ouro`` starts: a bad setting then reaches the
CLI's one-line error instead of failing the import of the Celery app.

Every step is an event: the train appends ``MergeAttempted`` then ``Merged``/``MergeRefused`` per head and
``TicketClosed`` for a ticket its merged pull request closes; the close-ticket gate appends
``TicketClosed``; a fixer session ``FixerSessionEnded``. What is printed is read back from the ledger.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ouroboros_gates.ops.cli._common import event_store, opened_forge

__all__ = ["close_ticket_cmd", "fix_cmd", "loop", "train_cmd"]

console = Console()


def loop(
    corpus: Annotated[
        Path | None,
        typer.Argument(
            help="Directory of runs (<run>/events.jsonl); default: the sample corpus shipped with the package.",
            show_default=False,
        ),
    ] = None,
    fixers: Annotated[bool, typer.Option("--fixers", help="Launch fixer sessions (sandboxed, under the cap).")] = False,
) -> None:
    """Run the whole loop once on the embedded default over CORPUS and print the summary."""
    from ouroboros_gates.ops.loop import run_loop
    from ouroboros_gates.schemas.settings import SAMPLE, load_settings

    settings = load_settings()
    if corpus is None:  # the sample corpus, wherever the package lies, is a root its messages may name
        console.print("corpus: the sample corpus shipped with the package (give a folder of runs for yours)")
        roots = os.pathsep.join([settings.roots or os.getcwd(), str(SAMPLE)])
        settings = settings.model_copy(update={"roots": roots})
    raise typer.Exit(run_loop(corpus or SAMPLE, console, settings, fixers=fixers))


def close_ticket_cmd(
    ticket: Annotated[int, typer.Argument(metavar="TICKET", help="The ticket to close.", min=1)],
    pull: Annotated[int, typer.Argument(metavar="PR", help="The merged pull request that proves it.", min=1)],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say whether it would close, and why; write nothing.")
    ] = False,
) -> None:
    """Close TICKET only when PR is merged, its body has | Backtest FN | 0 | and every check row exited 0."""
    from ouroboros_gates.events import Metadata, StreamWrite
    from ouroboros_gates.schemas import content_id
    from ouroboros_gates.schemas.settings import load_settings
    from ouroboros_gates.workers.merger import close_ticket, closed_event

    settings = load_settings()
    forge = opened_forge(settings)
    verdict = close_ticket(forge, ticket, pull, dry_run=dry_run)
    if dry_run:
        print(verdict.reason)
        raise typer.Exit(0 if verdict.ok else 1)
    if not verdict.ok:
        print(f"#{ticket} stays open (commented): {verdict.reason}")
        raise typer.Exit(1)
    meta = Metadata(
        producer="ouroboros_gates.ops.close_ticket", message_id=content_id("close-ticket", str(ticket), str(pull))
    )
    store = event_store(settings)
    store.commit([StreamWrite(f"ticket/{ticket}", [closed_event(ticket, pull, verdict)])], meta)
    print(f"#{ticket} closed on #{pull}: {verdict.reason}")


def train_cmd() -> None:
    """Run the merge train once over the configured forge (in this process) and print what it did."""
    from ouroboros_gates.events import Metadata
    from ouroboros_gates.events.projections import PROJECTIONS
    from ouroboros_gates.events.projector import catch_up
    from ouroboros_gates.ops.loop_steps import print_train
    from ouroboros_gates.schemas import MergeAttempted
    from ouroboros_gates.schemas.settings import load_settings
    from ouroboros_gates.workers.merger import train_writes

    settings = load_settings()
    store = event_store(settings)
    writes = train_writes(opened_forge(settings), store, settings)
    if writes:
        store.commit(writes, Metadata(producer="merger.train", message_id=uuid.uuid4().hex, tenant=settings.tenant))
    catch_up(store, PROJECTIONS)
    heads = {(e.pull_request, e.head_sha) for w in writes for e in w.events if isinstance(e, MergeAttempted)}
    print_train(store, console, only=heads)


def fix_cmd(
    fixers: Annotated[bool, typer.Option("--fixers", help="Launch fixer sessions (off by default).")] = False,
    ticket: Annotated[list[int] | None, typer.Option("--ticket", help="Only this ticket (repeatable).")] = None,
) -> None:
    """Launch one fixer session per ticket whose latest pre-check verdict is launch, under the daily cap."""
    from ouroboros_gates.events.projections import PROJECTIONS
    from ouroboros_gates.events.projector import catch_up
    from ouroboros_gates.ops.loop_steps import fixers_refusal, fixers_through_queue, launch_verdicts, print_fixers
    from ouroboros_gates.schemas.settings import load_settings

    settings = load_settings()
    if fixers:
        settings = settings.model_copy(update={"fixers": True})
    refusal = fixers_refusal(settings)
    if refusal:
        print(refusal, file=sys.stderr)
        raise typer.Exit(1)
    store = event_store(settings)
    verdicts = [v for v in launch_verdicts(store) if not ticket or v.ticket in ticket]
    left = fixers_through_queue(store, settings, verdicts)
    catch_up(store, PROJECTIONS)
    print_fixers(store, settings, console)
    raise typer.Exit(1 if left else 0)

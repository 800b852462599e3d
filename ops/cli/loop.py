"""``ouro loop`` (the main job), ``ouro close-ticket``, ``ouro train`` and ``ouro fix``.

The workers are imported when a command runs, not when ``ouro`` starts: a bad setting then reaches the
CLI's one-line error instead of failing the import of the Celery app.

Every step is an event: the train appends ``MergeAttempted`` then ``Merged``/``MergeRefused`` per head and
``TicketClosed`` for a ticket its merged pull request closes; the close-ticket gate appends
``TicketClosed``; a fixer session ``FixerSessionEnded``. What is printed is read back from the ledger. The
work is ``ops.loop``'s; this module parses the arguments and prints what it returns.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ouroboros_gates.ops.cli._common import event_store, opened_forge
from ouroboros_gates.ops.cli._output import finish, report_console

__all__ = ["close_ticket_cmd", "fix_cmd", "loop", "train_cmd"]

AsJson = Annotated[bool, typer.Option("--json", help="Print the report as one JSON document.")]


def loop(
    corpus: Annotated[
        Path | None,
        typer.Argument(
            help="Directory of runs (<run>/events.jsonl); default: the sample corpus shipped with the "
            "package.",
            show_default=False,
        ),
    ] = None,
    fixers: Annotated[
        bool, typer.Option("--fixers", help="Launch fixer sessions (sandboxed, under the cap).")
    ] = False,
    as_json: AsJson = False,
) -> None:
    """Run the whole loop once on the embedded default over CORPUS and print the summary."""
    from ouroboros_gates.ops.loop import run_loop
    from ouroboros_gates.schemas.settings import load_settings

    settings = load_settings()
    out = report_console(as_json)
    if corpus is None:
        out.print("corpus: the sample corpus shipped with the package (give a folder of runs for yours)")
    code = run_loop(corpus, out, settings, fixers=fixers)
    finish(out)
    raise typer.Exit(code)


def close_ticket_cmd(
    ticket: Annotated[int, typer.Argument(metavar="TICKET", help="The ticket to close.", min=1)],
    pull: Annotated[int, typer.Argument(metavar="PR", help="The merged pull request that proves it.", min=1)],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say whether it would close, and why; write nothing.")
    ] = False,
) -> None:
    """Close TICKET only when PR is merged, its body has | Backtest FN | 0 | and every check row exited 0."""
    from ouroboros_gates.ops.loop import close_ticket
    from ouroboros_gates.schemas.settings import load_settings

    settings = load_settings()
    verdict = close_ticket(opened_forge(settings), settings, ticket, pull, dry_run)
    if dry_run:
        print(verdict.reason)
        raise typer.Exit(0 if verdict.ok else 1)
    if not verdict.ok:
        print(f"#{ticket} stays open (commented): {verdict.reason}")
        raise typer.Exit(1)
    print(f"#{ticket} closed on #{pull}: {verdict.reason}")


def train_cmd(as_json: AsJson = False) -> None:
    """Run the merge train once over the configured forge (in this process) and print what it did."""
    from ouroboros_gates.ops.loop import print_train, train_here
    from ouroboros_gates.schemas.settings import load_settings

    settings = load_settings()
    store = event_store(settings)
    heads = train_here(opened_forge(settings), store, settings)
    out = report_console(as_json)
    print_train(store, out, only=heads)
    finish(out)


def fix_cmd(
    fixers: Annotated[bool, typer.Option("--fixers", help="Launch fixer sessions (off by default).")] = False,
    ticket: Annotated[
        list[int] | None, typer.Option("--ticket", help="Only this ticket (repeatable).")
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Launch one fixer session per ticket whose latest pre-check verdict is launch, under the daily cap."""
    from ouroboros_gates.ops.loop import fix, fixers_refusal, print_fixers
    from ouroboros_gates.schemas.settings import load_settings

    settings = load_settings()
    if fixers:
        settings = settings.model_copy(update={"fixers": True})
    refusal = fixers_refusal(settings)
    if refusal:
        print(refusal, file=sys.stderr)
        raise typer.Exit(1)
    store = event_store(settings)
    done = fix(store, settings, ticket or ())
    out = report_console(as_json)
    print_fixers(store, settings, out)
    finish(out)
    raise typer.Exit(0 if done.ok else 1)

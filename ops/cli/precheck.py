"""``ouro precheck`` and ``ouro propose``: the pre-check by hand, and the proposals it reads.

``ouro precheck [--ticket N]… [--json]`` judges the latest proposal of each ticket (every open mining
ticket by default) at no model cost and prints one row per ticket: ticket, proposal, miner, instances named,
instances found, verdict, reason. ``ouro propose [--ticket N]… [--batch B] [--census | --costs]`` asks the
model for a proposal per ticket, one call per batch, and posts each as the ticket's proposal comment. The work
is in
``ops.precheck`` and ``ops.proposals``, imported when a command runs (so ``ouro`` starts without the fleet's
settings); this module parses the arguments and prints what they return.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ouroboros_gates.ops.cli._output import console as output_console

if TYPE_CHECKING:
    from ouroboros_gates.ops.proposals import Census, Proposed
    from ouroboros_gates.schemas import ProposerCall

__all__ = ["precheck_cmd", "propose_cmd"]

console = output_console()
_Tickets = Annotated[list[int] | None, typer.Option("--ticket", "-t", min=1, help="A ticket (repeatable).")]


def _say(lines: Iterable[str]) -> None:
    """Lines as they are: no markup, no highlighting, never wrapped."""
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def precheck_cmd(
    ticket: _Tickets = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per ticket.")] = False,
) -> None:
    """Pre-check the latest proposal of each ticket (every open mining ticket by default): no model call."""
    from ouroboros_gates.ops.cli._common import event_store, opened_forge
    from ouroboros_gates.ops.precheck import precheck_rows
    from ouroboros_gates.schemas.settings import load_settings

    settings = load_settings()
    rows = precheck_rows(opened_forge(settings), event_store(settings), settings, ticket or ())
    if as_json:
        for row in rows:
            print(json.dumps(row, sort_keys=True))
        return
    if not rows:
        console.print("no open mining ticket")
        return
    _print_verdicts(rows)


def _print_verdicts(rows: list[dict[str, Any]]) -> None:
    """How many tickets launch and how many need labels, then one ticket's verdict a line."""
    from ouroboros_gates.ops.precheck import verdict_lines

    launch = sum(1 for row in rows if row["verdict"] == "launch")
    console.print(
        f"Pre-check: {launch} launch, {len(rows) - launch} needs_labels (0 model calls)", style="bold"
    )
    _say(verdict_lines(rows, console.width if console.is_terminal else None))


def propose_cmd(
    ticket: _Tickets = None,
    census: Annotated[
        bool, typer.Option("--census", help="Measure the proposals against the contract.")
    ] = False,
    batch: Annotated[
        int | None,
        typer.Option(
            "--batch",
            min=1,
            max=50,
            help="Tickets per model call (default 6; docs/loop.md, first mining run).",
        ),
    ] = None,
    costs: Annotated[
        bool, typer.Option("--costs", help="Print the recorded cost rows and their sums.")
    ] = False,
) -> None:
    """Ask the model for a proposal per open mining ticket (one call per batch) and post each as the ticket's
    proposal comment; --census counts the proposals an existing extractor reaches TP > 0 with; --costs prints
    the cost row of every call recorded, and their sums."""
    from ouroboros_gates.ops import proposals
    from ouroboros_gates.ops.cli._common import event_store, opened_forge
    from ouroboros_gates.schemas.settings import load_settings

    settings = load_settings()
    store = event_store(settings)
    if costs:
        recorded = proposals.recorded_calls(store)
        _say([*proposals.cost_lines(recorded), proposals.cost_summary(recorded)])
        return
    forge = opened_forge(settings)
    if census:
        _print_census(proposals.census(settings, store, forge, ticket or ()))
        return
    _print_proposed(proposals.propose_tickets(settings, store, forge, ticket or (), batch))


def _print_proposed(done: Proposed) -> None:
    from ouroboros_gates.ops.proposals import cost_lines

    _say(f"refused: {why}" for why in done.refused)
    _say(cost_lines(done.calls))
    console.print(
        f"{_calls_paid(done.calls)}; {len(done.posted)} comment(s) posted: "
        f"{', '.join(f'#{n}' for n in done.posted) or 'none'}"
    )


def _calls_paid(calls: Sequence[ProposerCall]) -> str:
    """How many calls were paid for and how many replayed from the cache, and what the paid ones cost."""
    paid = [c for c in calls if not c.cached]
    cost = sum(c.cost_usd for c in paid)
    return f"{len(paid)} call(s), {len(calls) - len(paid)} replayed from the cache, ${cost:.4f}"


def _print_census(found: Census) -> None:
    _say(found.notes)
    _say(
        f"#{row.ticket:<5} {row.miner:<20} extractor {row.extractor:<16} runs {row.instances}  TP {row.tp}  "
        f"{row.why}"
        for row in found.rows
    )
    console.print(
        f"census: {found.reaching} of {len(found.rows)} proposal(s) reach TP > 0 with the template's or a "
        "registered "
        "extractor"
    )

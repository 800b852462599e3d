"""``ouro precheck`` and ``ouro propose``: the pre-check by hand, and the proposals it reads.

``ouro precheck [--ticket N]… [--json]`` judges the latest proposal of each ticket (every open mining
ticket by default) at no model cost and prints one row per ticket: ticket, proposal, miner, instances named,
instances found, verdict, reason. ``ouro propose [--ticket N]… [--batch B] [--census | --costs]`` asks the model for
a proposal per ticket, one call per batch, and posts each as the ticket's proposal comment. The work is in
``ops.precheck_run``, imported when a command runs (so ``ouro`` starts without the fleet's settings).
"""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["precheck_cmd", "propose_cmd"]

_Tickets = Annotated[list[int] | None, typer.Option("--ticket", "-t", min=1, help="A ticket (repeatable).")]


def precheck_cmd(
    ticket: _Tickets = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per ticket.")] = False,
) -> None:
    """Pre-check the latest proposal of each ticket (every open mining ticket by default): no model call."""
    from ouroboros_gates.ops.precheck_run import precheck_main

    precheck_main(ticket or (), as_json)


def propose_cmd(
    ticket: _Tickets = None,
    census: Annotated[bool, typer.Option("--census", help="Measure the proposals against the contract.")] = False,
    batch: Annotated[
        int | None,
        typer.Option(
            "--batch", min=1, max=50, help="Tickets per model call (default 6; docs/loop.md, first mining run)."
        ),
    ] = None,
    costs: Annotated[bool, typer.Option("--costs", help="Print the recorded cost rows and their sums.")] = False,
) -> None:
    """Ask the model for a proposal per open mining ticket (one call per batch) and post each as the ticket's
    proposal comment; --census counts the proposals an existing extractor reaches TP > 0 with; --costs prints
    the cost row of every call recorded, and their sums."""
    from ouroboros_gates.ops.precheck_run import propose_main

    propose_main(ticket or (), census, batch, costs)

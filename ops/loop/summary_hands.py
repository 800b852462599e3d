"""The main job's summary sections on the loop's hands, read back from the ledger: the pre-check verdicts and
the labeler's queue, fixer sessions and the merge train (``ouro train`` and ``ouro fix`` print their
parts)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.table import Table
from sqlalchemy import select

from ouroboros_gates.events import EventStore, LedgerStore
from ouroboros_gates.events.projections.labels import label_requests
from ouroboros_gates.events.projections.loop import closed_tickets, fixer_sessions, merges
from ouroboros_gates.events.projections.proposals import verdicts
from ouroboros_gates.llm import endpoint_from_settings
from ouroboros_gates.ops.loop.hands import fixers_refusal
from ouroboros_gates.ops.loop.summary import titled_table
from ouroboros_gates.ops.precheck import verdict_lines
from ouroboros_gates.schemas import FixerSessionEnded
from ouroboros_gates.schemas.settings import Settings

__all__ = ["print_fixers", "print_train", "print_verdicts"]


def print_verdicts(store: LedgerStore, console: Console, settings: Settings) -> None:
    """The ledger's latest verdict per ticket and the labeler's queue (the main job's section)."""
    with store.reading() as conn:
        rows = list(conn.execute(select(verdicts).order_by(verdicts.c.position)).mappings())
        queued = conn.execute(select(label_requests.c.ticket).distinct()).scalars().all()
    latest: dict[int, dict[str, Any]] = {row["ticket"]: dict(row) for row in rows}
    if not latest:
        console.print("Pre-check: no mining ticket with a proposal")
        return
    _print_latest([latest[n] for n in sorted(latest)], console)
    _print_waiting(_waiting_for_labels(queued, latest), settings, console)


def _waiting_for_labels(queued: Iterable[int], latest: dict[int, dict[str, Any]]) -> list[int]:
    """The queued tickets whose latest verdict still needs labels, in order."""
    return sorted(n for n in set(queued) if n in latest and latest[n]["verdict"] == "needs_labels")


def _print_latest(shown: list[dict[str, Any]], console: Console) -> None:
    """How many tickets launch and how many need labels, then one ticket's verdict a line."""
    console.print(_verdicts_title(shown), style="bold")
    for line in verdict_lines(shown, console.width if console.is_terminal else None):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def _verdicts_title(shown: list[dict[str, Any]]) -> str:
    launch = sum(1 for row in shown if row["verdict"] == "launch")
    return f"Pre-check verdicts: {launch} launch, {len(shown) - launch} needs_labels (0 model calls)"


def _print_waiting(waiting: list[int], settings: Settings, console: Console) -> None:
    """The tickets whose label requests wait for the labeler, and whether a model will take them."""
    if not waiting:
        return
    tickets = ", ".join(f"#{n}" for n in waiting)
    if endpoint_from_settings(settings) is None:
        console.print(
            f"label requests queued for the labeler: {tickets} (no chat model configured: OURO_MODEL)"
        )
    else:
        console.print(f"label requests sent to the labeler: {tickets} (its labels below)")


def print_train(store: LedgerStore, console: Console, only: set[tuple[int, str]] | None = None) -> None:
    """The merge train's results and the tickets the close-ticket gate closed, from the ledger."""
    with store.reading() as conn:
        rows = list(conn.execute(select(merges).order_by(merges.c.position)).mappings())
        closed = list(conn.execute(select(closed_tickets).order_by(closed_tickets.c.ticket)).mappings())
    console.print(_train_table([r for r in rows if _is_asked_for(r, only)]))
    _print_closed(closed, console)


def _is_asked_for(merge: Any, only: set[tuple[int, str]] | None) -> bool:
    """Whether a merge is of one of the heads asked for (every head when none were)."""
    return only is None or (merge["pull_request"], merge["head_sha"]) in only


def _train_table(rows: list[Any]) -> Table:
    """How many heads merged and were refused, and each merge's outcome and why."""
    table = titled_table(_train_title(rows), ("pull request", "head", "outcome", "why"))
    for row in rows:
        why = "; ".join(row["refusal"]) if row["refusal"] else ""
        table.add_row(f"#{row['pull_request']}", row["head_sha"][:12], row["outcome"], why)
    return table


def _train_title(rows: list[Any]) -> str:
    """How many heads the train merged and refused."""
    counts = {o: sum(r["outcome"] == o for r in rows) for o in ("merged", "refused")}
    return f"Merge train: {counts['merged']} merged, {counts['refused']} refused (each head once)"


def _print_closed(closed: list[Any], console: Console) -> None:
    """The tickets the close-ticket gate closed."""
    for row in closed:
        console.print(
            f"close-ticket gate: #{row['ticket']} closed on #{row['pull_request']} ({row['reason']})"
        )
    if not closed:
        console.print("close-ticket gate: no ticket closed")


def print_fixers(store: LedgerStore, settings: Settings, console: Console) -> None:
    """Fixer sessions from the ledger, or why fixers are off."""
    with store.reading() as conn:
        rows = list(conn.execute(select(fixer_sessions).order_by(fixer_sessions.c.position)).mappings())
    refusal = fixers_refusal(settings)
    if not rows:
        console.print(f"Fixers: no session ({refusal or 'no ticket has a launch verdict left to take'})")
        return
    console.print(_fixers_table(rows))
    _print_isolations(store, rows, console)


def _print_isolations(store: EventStore, rows: list[Any], console: Console) -> None:
    """Each isolation the listed sessions' agents got, with their tickets."""
    for isolation, tickets in _isolations(store, rows).items():
        console.print(f"Fixer sandbox ({', '.join(f'#{n}' for n in tickets)}): {isolation}", soft_wrap=True)


def _fixers_table(rows: list[Any]) -> Table:
    """Each fixer session: its ticket, branch, cost, outcome and pull request, under their count and cost."""
    table = titled_table(
        f"Fixer sessions: {len(rows)}, ${sum(r['cost_usd'] for r in rows):.4f}",
        ("ticket", "branch", "cost USD", "outcome", "pull request"),
    )
    for row in rows:
        pull = f"#{row['pull_request']}" if row["pull_request"] else "-"
        table.add_row(f"#{row['ticket']}", row["branch"], f"{row['cost_usd']:.4f}", row["outcome"], pull)
    return table


def _isolations(store: EventStore, rows: list[Any]) -> dict[str, list[int]]:
    """Which isolation each listed fixer session's agent got (as its worker said), and the tickets: read from
    the event each ledger row was folded from."""
    found: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        (event,) = store.read(after=row["position"] - 1, limit=1)
        session = event.decode_as(FixerSessionEnded).session
        isolation = session.isolation or "not recorded (a session of an earlier version)"
        if session.ticket not in found[isolation]:
            found[isolation].append(session.ticket)
    return dict(found)

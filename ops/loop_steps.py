"""The main job's merge-train and fixer steps, through the queue, and what they print (also ``ouro train`` and
``ouro fix``).

The workers are imported when a command runs, not when ``ouro`` starts: a bad setting then reaches the
CLI's one-line error instead of failing the import of the Celery app.

Every step is an event: the train appends ``MergeAttempted`` then ``Merged``/``MergeRefused`` per head and
``TicketClosed`` for a ticket its merged pull request closes; the close-ticket gate appends
``TicketClosed``; a fixer session ``FixerSessionEnded``. What is printed is read back from the ledger.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from sqlalchemy import select

from ouroboros_gates.events import SqlEventStore, iter_all
from ouroboros_gates.events.projections.loop import closed_tickets, fixer_sessions, merges
from ouroboros_gates.forge.factory import open_forge
from ouroboros_gates.schemas import (
    FixerSessionEnded,
    LaunchFixer,
    PrecheckCompleted,
    PrecheckOutcome,
    PrecheckVerdict,
    RunMergeTrain,
    content_id,
)
from ouroboros_gates.schemas.settings import Settings

if TYPE_CHECKING:
    from ouroboros_gates.ops.embedded import SharedFleet
    from ouroboros_gates.workers.fixer import SessionRun

__all__ = [
    "fixers_refusal",
    "fixers_through_queue",
    "launch_verdicts",
    "loop_train",
    "print_fixers",
    "print_train",
    "train_through_queue",
]


def fixers_refusal(settings: Settings) -> str | None:
    """Why fixers may not launch unattended here, or None when they may."""
    from ouroboros_gates.workers.fixer import find_sandbox

    if not settings.fixers:
        return (
            "fixers are off: they launch only with --fixers (OURO_FIXERS=1) and an agent command (OURO_FIXER_COMMAND)"
        )
    if settings.fixer_daily_cap_usd <= 0:
        return "fixers are off: the daily cap OURO_FIXER_DAILY_CAP_USD is 0"
    argv = shlex.split(settings.fixer_command)
    if not argv or shutil.which(argv[0]) is None:
        return f"fixers are off: the agent command {argv[0] if argv else '(empty)'!r} (OURO_FIXER_COMMAND) is not found"
    sandbox, why = find_sandbox()
    return f"fixers refuse unattended launch: {why}" if sandbox is None else None


def launch_verdicts(store: SqlEventStore) -> list[PrecheckVerdict]:
    """The latest pre-check verdict of each ticket, where it is launch."""
    latest: dict[int, PrecheckVerdict] = {}
    for event in iter_all(store):
        if event.type == PrecheckCompleted.TYPE:
            verdict = event.decode_as(PrecheckCompleted).verdict
            latest[verdict.ticket] = verdict
    return [v for _, v in sorted(latest.items()) if v.verdict is PrecheckOutcome.LAUNCH]


def fixers_through_queue(
    store: SqlEventStore, settings: Settings, verdicts: Sequence[PrecheckVerdict], shared: SharedFleet | None = None
) -> list[str]:
    """Publish one ``LaunchFixer`` per verdict to an embedded fixer worker and wait; the ids left."""
    from ouroboros_gates.ops.embedded import fleet_for, wait_handled
    from ouroboros_gates.workers import publish
    from ouroboros_gates.workers.fixer.tasks import ingest_message
    from ouroboros_gates.workers.miner.ingest import file_digest, mine_message

    messages = [
        LaunchFixer(message_id=content_id("launch", str(v.ticket), str(v.proposal)), ticket=v.ticket, verdict=v,
                    tenant=settings.tenant)
        for v in verdicts
    ]  # fmt: skip
    pending = [m for m in messages if not store.is_handled(m.TASK, m.message_id)]
    if not pending:
        return []
    with fleet_for(shared, settings, ["fixer", "miner"]) as fleet:
        for message in pending:
            publish(message)
        left = wait_handled(store, {m.message_id: m.TASK for m in pending}, fleet, timeout_s=3600)
        # Each session's log is ingested and mined through the outbox: wait for both, so nothing is left
        # queued for a later run.
        ingests = [ingest_message(m, run) for m in pending if (run := _session_run(store, m)) is not None]
        left += wait_handled(store, {m.message_id: m.TASK for m in ingests}, fleet)
        mines = [mine_message(m, file_digest(Path(m.path))) for m in ingests]
        return left + wait_handled(store, {m.message_id: m.TASK for m in mines}, fleet)


def _session_run(store: SqlEventStore, message: LaunchFixer) -> SessionRun | None:
    """The session a handled launch recorded (its FixerSessionEnded), as the task saw it."""
    from ouroboros_gates.workers.fixer import SessionRun

    for event in reversed(store.read_stream(f"ticket/{message.ticket}")):
        if event.type == FixerSessionEnded.TYPE and event.meta.get("message_id") == message.message_id:
            session = event.decode_as(FixerSessionEnded).session
            log = Path(session.worktree).parent / "events.jsonl"
            return SessionRun(session, log.parent.name, log, "")
    return None


def train_through_queue(store: SqlEventStore, settings: Settings, shared: SharedFleet | None = None) -> list[str]:
    """Publish ``RunMergeTrain`` to an embedded merger worker when a ready head is untried; the ids left."""
    from ouroboros_gates.ops.embedded import fleet_for, wait_handled
    from ouroboros_gates.workers import publish
    from ouroboros_gates.workers.merger import ready_pulls, tried_heads

    forge = open_forge(settings)
    tried = tried_heads(forge, store)
    untried = sorted(f"{p.number}:{p.head_sha}" for p in ready_pulls(forge) if (p.number, p.head_sha) not in tried)
    if not untried:
        return []
    message = RunMergeTrain(message_id=content_id("merge-train", *untried), tenant=settings.tenant)
    if store.is_handled(message.TASK, message.message_id):
        return []
    with fleet_for(shared, settings, ["merger"]) as fleet:
        publish(message)
        return wait_handled(store, {message.message_id: message.TASK}, fleet)


def loop_train(store: SqlEventStore, settings: Settings, shared: SharedFleet | None = None) -> list[str]:
    """The main job's hands: fixer sessions on the launch verdicts when fixers may launch, then the train."""
    verdicts = launch_verdicts(store)
    left = [] if fixers_refusal(settings) else fixers_through_queue(store, settings, verdicts, shared)
    return left + train_through_queue(store, settings, shared)


def print_train(store: SqlEventStore, console: Console, only: set[tuple[int, str]] | None = None) -> None:
    """The merge train's results and the tickets the close-ticket gate closed, from the ledger."""
    with store.reading() as conn:
        rows = list(conn.execute(select(merges).order_by(merges.c.position)).mappings())
        closed = list(conn.execute(select(closed_tickets).order_by(closed_tickets.c.ticket)).mappings())
    rows = [r for r in rows if only is None or (r["pull_request"], r["head_sha"]) in only]
    counts = {o: sum(r["outcome"] == o for r in rows) for o in ("merged", "refused")}
    table = Table(title=f"Merge train: {counts['merged']} merged, {counts['refused']} refused (each head once)")
    for name in ("pull request", "head", "outcome", "why"):
        table.add_column(name)
    for row in rows:
        why = "; ".join(row["refusal"]) if row["refusal"] else ""
        table.add_row(f"#{row['pull_request']}", row["head_sha"][:12], row["outcome"], why)
    console.print(table)
    for row in closed:
        console.print(f"close-ticket gate: #{row['ticket']} closed on #{row['pull_request']} ({row['reason']})")
    if not closed:
        console.print("close-ticket gate: no ticket closed")


def print_fixers(store: SqlEventStore, settings: Settings, console: Console) -> None:
    """Fixer sessions from the ledger, or why fixers are off."""
    with store.reading() as conn:
        rows = list(conn.execute(select(fixer_sessions).order_by(fixer_sessions.c.position)).mappings())
    refusal = fixers_refusal(settings)
    if not rows:
        console.print(f"Fixers: no session ({refusal or 'no ticket has a launch verdict left to take'})")
        return
    table = Table(title=f"Fixer sessions: {len(rows)}, ${sum(r['cost_usd'] for r in rows):.4f}")
    for name in ("ticket", "branch", "cost USD", "outcome", "pull request"):
        table.add_column(name)
    for row in rows:
        pull = f"#{row['pull_request']}" if row["pull_request"] else "-"
        table.add_row(f"#{row['ticket']}", row["branch"], f"{row['cost_usd']:.4f}", row["outcome"], pull)
    console.print(table)

"""The loop's hands: fixer sessions on the launch verdicts and the merge train, through the queue (the main
job's step, and ``ouro fix``), the train in this process (``ouro train``) and the close-ticket gate
(``ouro close-ticket``).

The workers are imported when a step runs, not when ``ouro`` starts: a bad setting then reaches the
CLI's one-line error instead of failing the import of the Celery app.

Every step is an event: the train appends ``MergeAttempted`` then ``Merged``/``MergeRefused`` per head and
``TicketClosed`` for a ticket its merged pull request closes; the close-ticket gate appends
``TicketClosed``; a fixer session ``FixerSessionEnded``. What is printed is read back from the ledger
(``ops.loop.summary_hands``).
"""

from __future__ import annotations

import shlex
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ouroboros_gates.events import EventStore, LedgerStore, Metadata, StreamWrite, iter_all, open_store
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import catch_up
from ouroboros_gates.forge import WritableForge
from ouroboros_gates.forge.factory import open_forge
from ouroboros_gates.ops.embedded import SharedFleet
from ouroboros_gates.ops.loop.queue import Handled, sharing, tasks, through_queue
from ouroboros_gates.schemas import (
    FixerSessionEnded,
    LaunchFixer,
    MergeAttempted,
    PrecheckCompleted,
    PrecheckOutcome,
    PrecheckVerdict,
    RunMergeTrain,
    content_id,
)
from ouroboros_gates.schemas.settings import Settings

if TYPE_CHECKING:
    from ouroboros_gates.workers.fixer import SessionRun
    from ouroboros_gates.workers.merger import CloseVerdict

__all__ = [
    "close_ticket",
    "fix",
    "fixer_step",
    "fixers_refusal",
    "hands_step",
    "launch_verdicts",
    "train_here",
    "train_step",
]

FIXER_WAIT_S = 3600.0
"""How long the fixer sessions may take, together."""


def fixers_refusal(settings: Settings) -> str | None:
    """Why fixers may not launch unattended here, or None when they may."""
    from ouroboros_gates.workers.fixer import find_sandbox

    if not settings.fixers:
        return (
            "fixers are off: they launch only with --fixers (OURO_FIXERS=1) and an agent command "
            "(OURO_FIXER_COMMAND)"
        )
    if settings.fixer_daily_cap_usd <= 0:
        return "fixers are off: the daily cap OURO_FIXER_DAILY_CAP_USD is 0"
    missing = _missing_agent(settings.fixer_command)
    if missing is not None:
        return missing
    sandbox, why = find_sandbox()
    return f"fixers refuse unattended launch: {why}" if sandbox is None else None


def _missing_agent(command: str) -> str | None:
    """Why the agent command cannot run (empty, or its program not on the PATH), or None when it can."""
    argv = shlex.split(command)
    if not argv or shutil.which(argv[0]) is None:
        return (
            f"fixers are off: the agent command {argv[0] if argv else '(empty)'!r} (OURO_FIXER_COMMAND) "
            "is not found"
        )
    return None


def launch_verdicts(store: EventStore) -> list[PrecheckVerdict]:
    """The latest pre-check verdict of each ticket, where it is launch."""
    latest: dict[int, PrecheckVerdict] = {}
    for event in iter_all(store):
        if event.type == PrecheckCompleted.TYPE:
            verdict = event.decode_as(PrecheckCompleted).verdict
            latest[verdict.ticket] = verdict
    return [v for _, v in sorted(latest.items()) if v.verdict is PrecheckOutcome.LAUNCH]


def fixer_step(
    store: LedgerStore,
    settings: Settings,
    verdicts: Sequence[PrecheckVerdict],
    shared: SharedFleet | None = None,
) -> Handled:
    """One ``LaunchFixer`` per verdict, handled by a fixer worker; then each session's log ingested and mined
    (through the outbox), so nothing is left queued for a later run."""
    from ouroboros_gates.workers.fixer.tasks import ingest_message
    from ouroboros_gates.workers.miner.ingest import file_digest, mine_message

    messages = _launches(verdicts, settings.tenant)
    queues = ["fixer", "miner"]
    with sharing(shared, settings, queues) as fleet:
        launched = through_queue(store, settings, queues, fleet, publish=messages, timeout_s=FIXER_WAIT_S)
        if launched.ok and not launched.handled:
            return launched  # every session ran before: its log was ingested and mined then
        sent = [m for m in messages if m.message_id not in launched.before]
        ingests = [ingest_message(m, run) for m in sent if (run := _session_run(store, m)) is not None]
        ingested = through_queue(store, settings, queues, fleet, waiting=tasks(ingests))
        mines = [mine_message(m, file_digest(Path(m.path))) for m in ingests]
        return launched + ingested + through_queue(store, settings, queues, fleet, waiting=tasks(mines))


def _launches(verdicts: Sequence[PrecheckVerdict], tenant: str) -> list[LaunchFixer]:
    """One ``LaunchFixer`` per launch verdict; its id comes from the ticket and proposal, so a repeat is
    recognised."""
    return [
        LaunchFixer(
            message_id=content_id("launch", str(v.ticket), str(v.proposal)),
            ticket=v.ticket,
            verdict=v,
            tenant=tenant,
        )
        for v in verdicts
    ]


def _session_run(store: EventStore, message: LaunchFixer) -> SessionRun | None:
    """The session a handled launch recorded (its FixerSessionEnded), as the task saw it."""
    from ouroboros_gates.workers.fixer import SessionRun

    for event in reversed(store.read_stream(f"ticket/{message.ticket}")):
        if event.type == FixerSessionEnded.TYPE and event.meta.get("message_id") == message.message_id:
            session = event.decode_as(FixerSessionEnded).session
            log = Path(session.worktree).parent / "events.jsonl"
            return SessionRun(session, log.parent.name, log, "")
    return None


def train_step(store: LedgerStore, settings: Settings, shared: SharedFleet | None = None) -> Handled:
    """``RunMergeTrain`` handled by a merger worker, when a ready head is untried."""
    from ouroboros_gates.workers.merger import ready_pulls, tried_heads

    forge = open_forge(settings)
    tried = tried_heads(forge, store)
    untried = sorted(
        f"{p.number}:{p.head_sha}" for p in ready_pulls(forge) if (p.number, p.head_sha) not in tried
    )
    if not untried:
        return Handled()
    message = RunMergeTrain(message_id=content_id("merge-train", *untried), tenant=settings.tenant)
    return through_queue(store, settings, ["merger"], shared, publish=[message])


def hands_step(store: LedgerStore, settings: Settings, shared: SharedFleet | None = None) -> Handled:
    """The main job's hands: fixer sessions on the launch verdicts when fixers may launch, then the train."""
    verdicts = launch_verdicts(store)
    fixed = Handled() if fixers_refusal(settings) else fixer_step(store, settings, verdicts, shared)
    return fixed + train_step(store, settings, shared)


def fix(store: LedgerStore, settings: Settings, tickets: Sequence[int] = ()) -> Handled:
    """``ouro fix``: a fixer session per ticket (``tickets``, else every one) whose latest verdict is launch,
    through the fixer's queue; the ledger caught up."""
    verdicts = [v for v in launch_verdicts(store) if not tickets or v.ticket in tickets]
    done = fixer_step(store, settings, verdicts)
    catch_up(store, PROJECTIONS)
    return done


def train_here(forge: WritableForge, store: LedgerStore, settings: Settings) -> set[tuple[int, str]]:
    """``ouro train``: the merge train once over ``forge``, in this process; the (pull request, head) pairs it
    took, the ledger caught up."""
    from ouroboros_gates.workers.merger import train_writes

    writes = train_writes(forge, store, settings)
    if writes:
        meta = Metadata(producer="merger.train", message_id=uuid.uuid4().hex, tenant=settings.tenant)
        store.commit(writes, meta)
    catch_up(store, PROJECTIONS)
    return _heads_tried(writes)


def _heads_tried(writes: Sequence[StreamWrite]) -> set[tuple[int, str]]:
    """The (pull request, head) pairs the train's writes attempt to merge."""
    return {(e.pull_request, e.head_sha) for w in writes for e in w.events if isinstance(e, MergeAttempted)}


def close_ticket(
    forge: WritableForge, settings: Settings, ticket: int, pull: int, dry_run: bool
) -> CloseVerdict:
    """``ouro close-ticket``: the gate's verdict on closing ``ticket`` on the merged ``pull``; a passing one
    (not a dry run) closes the ticket and is recorded as ``TicketClosed``."""
    from ouroboros_gates.workers.merger import close_ticket as close
    from ouroboros_gates.workers.merger import closed_event

    verdict = close(forge, ticket, pull, dry_run=dry_run)
    if dry_run or not verdict.ok:
        return verdict  # the event log is not even opened: a dry run writes nothing
    key = content_id("close-ticket", str(ticket), str(pull))
    meta = Metadata(producer="ouroboros_gates.ops.close_ticket", message_id=key)
    event = closed_event(ticket, pull, verdict)
    open_store(settings.event_log_url).commit([StreamWrite(f"ticket/{ticket}", [event])], meta)
    return verdict

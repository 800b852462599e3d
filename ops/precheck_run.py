"""What ``ouro precheck``, ``ouro propose`` and the main job's pre-check section run.

The pre-check by hand judges the latest proposal of each ticket against the configured forge
(``OURO_FORGE``) and the recorded runs at no model cost, and reads only; the fleet's
``prechecker.precheck`` records verdicts. The proposer posts comments and appends its cost rows and
``ProposalPosted`` events, each with a ``PrecheckTicket`` through the outbox.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from sqlalchemy import select

from ouroboros_gates.events import Metadata, SqlEventStore, StreamWrite, open_store, utcnow
from ouroboros_gates.events.projections.labels import label_requests
from ouroboros_gates.events.projections.proposals import verdicts
from ouroboros_gates.events.tables import outbox
from ouroboros_gates.forge import Forge, Ticket, WritableForge
from ouroboros_gates.forge.factory import open_forge
from ouroboros_gates.llm import endpoint_from_settings, metered_from_settings
from ouroboros_gates.miners import discover
from ouroboros_gates.ops.cli._common import opened_forge
from ouroboros_gates.ops.embedded import SharedFleet, fleet_for, wait_handled
from ouroboros_gates.schemas import LabelTicket, ProposalPosted, ProposerCall, ProposerCallCompleted, content_id
from ouroboros_gates.schemas.errors import ConfigurationError
from ouroboros_gates.schemas.settings import Settings, load_settings
from ouroboros_gates.workers import build_app, declare_queues, publish, relay_outbox
from ouroboros_gates.workers.prechecker import (
    ProposalFormatError,
    RunIndex,
    is_mining,
    latest_proposal,
    parse_proposal,
    precheck,
    precheck_message,
    registered_kinds,
    ticket_stream,
)
from ouroboros_gates.workers.proposer import (
    BATCH_SIZE,
    Batch,
    CensusRow,
    census_row,
    count,
    post,
    propose,
    shared_prefix,
)

__all__ = [
    "cost_lines",
    "cost_summary",
    "loop_forge",
    "precheck_main",
    "precheck_rows",
    "precheck_through_queue",
    "print_verdicts",
    "propose_main",
    "record_proposals",
    "verdict_lines",
]

console = Console()
COLUMNS = ("ticket", "proposal", "miner", "named", "found", "verdict")
_ROW = "{:<7} {:>10}  {:<20} {:>5} {:>5}  {}"
_INDENT = " " * 8


def precheck_rows(
    forge: Forge, store: SqlEventStore | None, settings: Settings, tickets: Sequence[int] = ()
) -> list[dict[str, Any]]:
    """One verdict per ticket (every open mining ticket when none is named), as JSON-ready rows."""
    chosen = [forge.ticket(n) for n in tickets] if tickets else [t for t in forge.tickets() if is_mining(t)]
    runs = RunIndex(store, settings.allowed_roots)
    registered, now = registered_kinds(), utcnow()
    return [precheck(ticket, forge, runs, registered, now).verdict.to_json_dict() for ticket in chosen]


def verdict_lines(rows: Iterable[Mapping[str, Any]], width: int = 100) -> list[str]:
    """The verdict rows as text, one line per ticket with its reason wrapped below it (``--json`` lists
    the instances themselves)."""
    lines = [_ROW.format(*COLUMNS)]
    for row in rows:
        miner = row.get("miner") or "-"
        named, found = len(row["instances_named"]), len(row["instances_found"])
        lines.append(_ROW.format(f"#{row['ticket']}", row.get("proposal") or "-", miner, named, found, row["verdict"]))
        lines += textwrap.wrap(row["reason"], max(width, 40), initial_indent=_INDENT, subsequent_indent=_INDENT)
    return lines


def precheck_main(ticket: Sequence[int], as_json: bool) -> None:
    """``ouro precheck``: one row (or JSON object) per ticket."""
    settings = load_settings()
    store = open_store(settings.event_log_url)
    rows = precheck_rows(opened_forge(settings), store, settings, ticket)
    if as_json:
        for row in rows:
            print(json.dumps(row, sort_keys=True))
        return
    if not rows:
        console.print("no open mining ticket")
        return
    launch = sum(1 for row in rows if row["verdict"] == "launch")
    console.print(f"Pre-check: {launch} launch, {len(rows) - launch} needs_labels (0 model calls)", style="bold")
    for line in verdict_lines(rows, console.width):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def print_verdicts(store: SqlEventStore, console: Console, settings: Settings) -> None:
    """The ledger's latest verdict per ticket and the labeler's queue (the main job's section)."""
    with store.reading() as conn:
        rows = list(conn.execute(select(verdicts).order_by(verdicts.c.position)).mappings())
        queued = conn.execute(select(label_requests.c.ticket).distinct()).scalars().all()
    latest: dict[int, dict[str, Any]] = {row["ticket"]: dict(row) for row in rows}
    if not latest:
        console.print("Pre-check: no mining ticket with a proposal")
        return
    shown = [latest[n] for n in sorted(latest)]
    launch = sum(1 for row in shown if row["verdict"] == "launch")
    title = f"Pre-check verdicts: {launch} launch, {len(shown) - launch} needs_labels (0 model calls)"
    console.print(title, style="bold")
    for line in verdict_lines(shown, console.width):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    waiting = sorted(n for n in set(queued) if n in latest and latest[n]["verdict"] == "needs_labels")
    if waiting:
        tickets = ", ".join(f"#{n}" for n in waiting)
        if endpoint_from_settings(settings) is None:
            console.print(f"label requests queued for the labeler: {tickets} (no chat model configured: OURO_MODEL)")
        else:
            console.print(f"label requests sent to the labeler: {tickets} (its labels below)")


def label_through_queue(store: SqlEventStore, settings: Settings, shared: SharedFleet | None = None) -> list[str]:
    """With a chat model configured, let the labeler (an embedded worker on ``gpu``) handle the label
    requests the pre-check queued; returns the ids not handled in time. Without one they stay queued."""
    if endpoint_from_settings(settings) is None:
        return []
    with store.reading() as conn:
        rows = conn.execute(select(outbox.c.message_id).where(outbox.c.task == LabelTicket.TASK)).scalars().all()
    pending = {
        message_id: LabelTicket.TASK for message_id in rows if not store.is_handled(LabelTicket.TASK, message_id)
    }
    if not pending:
        return []
    with fleet_for(shared, settings, ["gpu"]) as fleet:
        return wait_handled(store, pending, fleet)


def loop_forge(corpus: Path, settings: Settings) -> Settings | None:
    """The settings whose forge the main job pre-checks: the corpus's own ``forge/`` when it has one, else
    ``OURO_FORGE`` when it was set; None when there is neither."""
    if (corpus / "forge" / "tickets").is_dir():
        return settings.model_copy(update={"forge": str(corpus.resolve())})
    return settings if "forge" in settings.model_fields_set else None


def precheck_through_queue(
    store: SqlEventStore, settings: Settings, key: str, shared: SharedFleet | None = None
) -> list[str]:
    """Publish one ``PrecheckTicket`` per open mining ticket of the settings' forge and wait for the
    prechecker (an embedded worker) to handle them; returns the ids not handled in time.

    ``key`` is what the verdicts depend on besides the proposal (the corpus's runs): a message already
    handled for the same proposal and key is not sent again, so a second run appends nothing."""
    forge = open_forge(settings)
    messages = []
    for ticket in (t for t in forge.tickets() if is_mining(t)):
        comment = latest_proposal(ticket)
        proposal = comment.id if comment else "-"
        messages.append(precheck_message(ticket.number, f"{proposal}/{key}", None, settings.tenant))
    pending = [m for m in messages if not store.is_handled(m.TASK, m.message_id)]
    if not pending:
        return []
    sender = build_app(settings, include=False)  # the settings' broker, whatever the environment says
    declare_queues(sender)
    with fleet_for(shared, settings, ["prechecker"]) as fleet:
        for message in pending:
            publish(message, via=sender)
        return wait_handled(store, {m.message_id: m.TASK for m in pending}, fleet)


def propose_main(ticket: Sequence[int], census: bool, batch: int | None, costs: bool = False) -> None:
    """``ouro propose``: post a proposal per ticket (one call per batch), the census, or the recorded costs."""
    settings = load_settings()
    store = open_store(settings.event_log_url)
    if costs:
        recorded = [e.decode_as(ProposerCallCompleted).call for e in store.read_stream("proposer/calls")]
        for line in [*cost_lines(recorded), cost_summary(recorded)]:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        return
    forge = opened_forge(settings)
    chosen = [forge.ticket(n) for n in ticket] if ticket else [t for t in forge.tickets() if is_mining(t)]
    if census:
        _census(chosen, store, settings)
        return
    client = metered_from_settings(settings)
    if client is None or settings.model is None:
        raise ConfigurationError("OURO_MODEL: no chat model is configured; `ouro propose` asks one")
    batches = propose(chosen, client, shared_prefix(registered_kinds()), family=settings.model, clock=utcnow,
                      load=_load, batch_size=batch or BATCH_SIZE)  # fmt: skip
    calls, posted = record_proposals(batches, forge, store)
    relay_outbox(store)
    for line in cost_lines(calls):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    paid = [c for c in calls if not c.cached]
    console.print(
        f"{len(paid)} call(s), {len(calls) - len(paid)} replayed from the cache, ${sum(c.cost_usd for c in paid):.4f};"
        f" {len(posted)} comment(s) posted: {', '.join(f'#{n}' for n in posted) or 'none'}"
    )


def record_proposals(
    batches: Iterable[Batch], forge: WritableForge, store: SqlEventStore
) -> tuple[list[ProposerCall], list[int]]:
    """Post each batch's comments and append, per call, its cost row and, per comment posted, its
    ``ProposalPosted`` with a ``PrecheckTicket`` in the outbox; returns the cost rows and the tickets posted."""
    calls: list[ProposerCall] = []
    posted: list[int] = []
    for item in batches:
        calls.append(item.call)
        for why in (item.error, *item.refused):
            if why:
                console.print(f"refused: {why}", markup=False, highlight=False, soft_wrap=True)
        if not item.call.cached:
            key = content_id("proposer-call", item.call.to_json_dict())
            meta = Metadata(producer="proposer.call", message_id=key)
            store.commit([StreamWrite("proposer/calls", [ProposerCallCompleted(call=item.call)])], meta)
        for draft in item.drafts:
            proposal = post(forge, draft)
            if proposal is None:
                continue
            meta = Metadata(
                producer="proposer.post", message_id=content_id("posted", proposal.ticket, proposal.comment_id)
            )
            follow = precheck_message(proposal.ticket, str(proposal.comment_id), None)
            store.commit(
                [StreamWrite(ticket_stream(proposal.ticket), [ProposalPosted(proposal=proposal)])], meta, [follow]
            )
            posted.append(proposal.ticket)
    return calls, posted


def cost_lines(calls: Sequence[ProposerCall]) -> list[str]:
    """One line per call: family, tickets, artifacts, input, cache read, cache creation, output, USD, s, load."""
    row = "{:<16} {:<18} {:>3} {:>8} {:>8} {:>8} {:>7} {:>9} {:>7} {:>5}"
    lines = [row.format("family", "tickets", "art", "input", "c.read", "c.write", "output", "USD", "wall s", "load")]
    for c in calls:
        tickets = ",".join(map(str, c.tickets))
        load = "-" if c.load is None else f"{c.load:.2f}"
        cost = "cached" if c.cached else f"{c.cost_usd:.4f}"
        lines.append(row.format(c.family[:16], tickets[:18], c.artifacts, c.input_tokens, c.cache_read_tokens,
                                c.cache_creation_tokens, c.output_tokens, cost, f"{c.wall_s:.1f}", load))  # fmt: skip
    return lines


def cost_summary(calls: Sequence[ProposerCall]) -> str:
    """The sums over paid calls, as the first mining run's costs were summed (docs/loop.md, "First mining run"):
    calls, tickets, the largest batch, input, cache read, cache creation and output tokens, USD, call-seconds
    per ticket, and the prompt-cache hit ratio (cache read over every input token)."""
    paid = [c for c in calls if not c.cached]
    tickets = sum(len(c.tickets) for c in paid)
    read, created = sum(c.cache_read_tokens for c in paid), sum(c.cache_creation_tokens for c in paid)
    seen = sum(c.input_tokens for c in paid) + read + created
    return (
        f"{len(paid)} call(s), {tickets} ticket(s), at most {max((len(c.tickets) for c in paid), default=0)} a call;"
        f" input {sum(c.input_tokens for c in paid)}, cache read {read}, cache creation {created},"
        f" output {sum(c.output_tokens for c in paid)} tokens; ${sum(c.cost_usd for c in paid):.4f};"
        f" {sum(c.wall_s for c in paid) / tickets if tickets else 0:.1f} call-s per ticket;"
        f" cache hit ratio {read / seen if seen else 0:.4f}"
    )


def _load() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def _census(tickets: Sequence[Ticket], store: SqlEventStore, settings: Settings) -> None:
    miners, _broken = discover()
    runs = RunIndex(store, settings.allowed_roots)
    rows: list[CensusRow] = []
    for ticket in tickets:
        comment = latest_proposal(ticket)
        if comment is None:
            console.print(f"#{ticket.number}: no proposal", markup=False, highlight=False, soft_wrap=True)
            continue
        try:
            proposal = parse_proposal(comment.body, ticket=ticket.number, comment_id=comment.id,
                                      posted_at=comment.created_at)  # fmt: skip
        except ProposalFormatError as exc:
            console.print(
                f"#{ticket.number}: malformed proposal, not measured: {exc}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
            continue
        rows.append(census_row(proposal, miners, runs.file))
    for row in rows:
        line = f"#{row.ticket:<5} {row.miner:<20} extractor {row.extractor:<16} runs {row.instances}  TP {row.tp}"
        console.print(f"{line}  {row.why}", markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"census: {count(rows)} of {len(rows)} proposal(s) reach TP > 0 with the template's or a registered extractor"
    )

"""Celery tasks of the prechecker (thin: load the ticket, call the core, append)."""

from __future__ import annotations

from ouroboros_gates.events import utcnow
from ouroboros_gates.forge.factory import open_forge
from ouroboros_gates.schemas import PrecheckSweep, PrecheckTicket
from ouroboros_gates.workers.prechecker.check import is_mining, precheck
from ouroboros_gates.workers.prechecker.record import (
    label_message,
    new_events,
    precheck_message,
    ticket_stream,
)
from ouroboros_gates.workers.prechecker.sources import RunIndex, registered_kinds
from ouroboros_gates.workers.shell import Context, Outcome, fleet_task


@fleet_task(PrecheckTicket)
def precheck_ticket(message: PrecheckTicket, ctx: Context) -> Outcome:
    """prechecker.precheck: judge the ticket's latest proposal; needs_labels queues it for the labeler."""
    forge = open_forge(ctx.settings)
    runs = RunIndex(ctx.store, ctx.settings.allowed_roots)
    result = precheck(forge.ticket(message.ticket), forge, runs, registered_kinds(), utcnow())
    stream = ticket_stream(message.ticket)
    events = new_events(result, ctx.store.read_stream(stream))
    follow = label_message(result, message) if events else None
    return Outcome.single(stream, *events, follow_ups=(follow,) if follow else ())


@fleet_task(PrecheckSweep)
def sweep(message: PrecheckSweep, ctx: Context) -> Outcome:
    """prechecker.sweep: one PrecheckTicket per open mining ticket, through the outbox."""
    tickets = [t.number for t in open_forge(ctx.settings).tickets() if is_mining(t)]
    return Outcome(follow_ups=[precheck_message(n, message.message_id, message) for n in tickets])

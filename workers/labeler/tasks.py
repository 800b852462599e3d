"""Celery task of the labeler worker (thin: validate, call the core, append); routed to the ``gpu`` queue."""

from __future__ import annotations

from ouroboros_gates.forge.factory import open_forge
from ouroboros_gates.schemas import LabelTicket
from ouroboros_gates.workers.labeler.core import known_runs, label_tickets, run_events
from ouroboros_gates.workers.shell import Context, Outcome, fleet_task


@fleet_task(LabelTicket)
def label(message: LabelTicket, ctx: Context) -> Outcome:
    """labeler.label: one ticket, from its queued request or from the ticket alone."""
    requests = {message.ticket: message.request} if message.request is not None else {}
    forge = open_forge(ctx.settings)
    result = label_tickets(
        ctx.settings, [message.ticket], forge, known_runs(ctx.settings, ctx.store), requests
    )
    return Outcome(writes=run_events(result))

"""The main job's pre-check and labeler steps, through the queue: a ``PrecheckTicket`` per open mining ticket
of the forge, then the label requests the pre-check queued, handled by a labeler when a chat model is
configured (without one they stay queued, and the summary says so)."""

from __future__ import annotations

from sqlalchemy import select

from ouroboros_gates.events import LedgerStore
from ouroboros_gates.events.tables import outbox
from ouroboros_gates.forge.factory import open_forge
from ouroboros_gates.llm import endpoint_from_settings
from ouroboros_gates.ops.embedded import SharedFleet
from ouroboros_gates.ops.loop.queue import Handled, through_queue
from ouroboros_gates.schemas import LabelTicket
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.prechecker import is_mining, latest_proposal, precheck_message

__all__ = ["label_step", "precheck_step"]


def precheck_step(
    store: LedgerStore, settings: Settings, key: str, shared: SharedFleet | None = None
) -> Handled:
    """One ``PrecheckTicket`` per open mining ticket of the settings' forge, handled by the prechecker.

    ``key`` is what the verdicts depend on besides the proposal (the corpus's runs): a message already
    handled for the same proposal and key is not sent again, so a second run appends nothing."""
    forge = open_forge(settings)
    messages = []
    for ticket in (t for t in forge.tickets() if is_mining(t)):
        comment = latest_proposal(ticket)
        proposal = comment.id if comment else "-"
        messages.append(precheck_message(ticket.number, f"{proposal}/{key}", None, settings.tenant))
    return through_queue(store, settings, ["prechecker"], shared, publish=messages)


def label_step(store: LedgerStore, settings: Settings, shared: SharedFleet | None = None) -> Handled:
    """With a chat model configured, the label requests the pre-check queued, handled by the labeler (an
    embedded worker on ``gpu``); without one they stay queued."""
    if endpoint_from_settings(settings) is None:
        return Handled()
    with store.reading() as conn:
        rows = (
            conn.execute(select(outbox.c.message_id).where(outbox.c.task == LabelTicket.TASK)).scalars().all()
        )
    return through_queue(store, settings, ["gpu"], shared, waiting=dict.fromkeys(rows, LabelTicket.TASK))

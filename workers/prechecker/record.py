"""What a pre-check appends: once per proposal and verdict, never again for the same answer.

A ticket's stream ``ticket/<n>`` holds its proposals and verdicts. A pre-check of a proposal whose last
verdict is the same appends nothing (a sweep every hour does not grow the log); a new proposal, or a
verdict that changed because the corpus did, appends ``ProposalPosted`` (if the proposal is new),
``PrecheckCompleted`` and, for ``needs_labels``, ``LabelRequested`` with a ``LabelTicket`` for the labeler.
"""

from __future__ import annotations

from collections.abc import Sequence

from ouroboros_gates.events import StoredEvent
from ouroboros_gates.schemas import (
    Event,
    LabelRequested,
    LabelTicket,
    Message,
    PrecheckCompleted,
    PrecheckTicket,
    PrecheckVerdict,
    ProposalPosted,
    content_id,
)
from ouroboros_gates.workers.prechecker.check import Precheck

__all__ = ["label_message", "new_events", "precheck_message", "ticket_stream"]


def ticket_stream(ticket: int) -> str:
    """The stream of a ticket's proposals, verdicts and label requests."""
    return f"ticket/{ticket}"


def new_events(result: Precheck, prior: Sequence[StoredEvent]) -> list[Event]:
    """The events ``result`` adds to a ticket stream that already holds ``prior``."""
    verdict = result.verdict
    last = _last_verdict(prior, verdict.proposal)
    if last is not None and _same(last, verdict):
        return []
    posted = _posted(prior)
    events: list[Event] = []
    if result.proposal is not None and result.proposal.comment_id not in posted:
        events.append(ProposalPosted(proposal=result.proposal))
    events.append(PrecheckCompleted(verdict=verdict))
    if result.request is not None:
        events.append(LabelRequested(request=result.request))
    return events


def _posted(prior: Sequence[StoredEvent]) -> set[int]:
    """The comment ids of the proposals the stream already holds."""
    return {e.decode_as(ProposalPosted).proposal.comment_id for e in prior if e.type == ProposalPosted.TYPE}


def _last_verdict(prior: Sequence[StoredEvent], proposal: int | None) -> PrecheckVerdict | None:
    """The latest verdict the stream holds on ``proposal``."""
    verdicts = (
        e.decode_as(PrecheckCompleted).verdict for e in reversed(prior) if e.type == PrecheckCompleted.TYPE
    )
    return next((v for v in verdicts if v.proposal == proposal), None)


def _same(old: PrecheckVerdict, new: PrecheckVerdict) -> bool:
    keys = ("verdict", "miner", "instances_named", "instances_found", "reason")
    return all(getattr(old, key) == getattr(new, key) for key in keys)


def label_message(result: Precheck, cause: Message) -> LabelTicket | None:
    """The labeler's message for a ``needs_labels`` verdict (its id follows the request's content)."""
    request = result.request
    if request is None:
        return None
    key = content_id("label", request.ticket, request.proposal, request.instances, request.reason)
    return LabelTicket(
        message_id=key,
        correlation_id=cause.correlation_id or cause.message_id,
        causation_id=cause.message_id,
        tenant=cause.tenant,
        ticket=request.ticket,
        request=request,
    )


def precheck_message(
    ticket: int, key: str, cause: Message | None = None, tenant: str = "default"
) -> PrecheckTicket:
    """A ``PrecheckTicket`` whose id follows ``key`` (a sweep's id, or the ticket's latest proposal)."""
    message_id = content_id("precheck", ticket, key)
    return PrecheckTicket(
        message_id=message_id,
        correlation_id=(cause.correlation_id or cause.message_id) if cause else message_id,
        causation_id=cause.message_id if cause else None,
        tenant=cause.tenant if cause else tenant,
        ticket=ticket,
    )

"""``ouro propose``'s work: ask the model for a proposal per ticket (one call per batch), post each as the
ticket's proposal comment and record it (the call's cost row; ``ProposalPosted`` with a ``PrecheckTicket``
through the outbox); the census of the proposals against the contract; the recorded costs, as text.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ouroboros_gates.events import EventStore, Metadata, StreamWrite, utcnow
from ouroboros_gates.forge import WritableForge
from ouroboros_gates.llm import metered_from_settings
from ouroboros_gates.miners import discover
from ouroboros_gates.schemas import ProposalPosted, ProposerCall, ProposerCallCompleted, content_id
from ouroboros_gates.schemas.errors import ConfigurationError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import relay_outbox
from ouroboros_gates.workers.prechecker import (
    ProposalFormatError,
    RunIndex,
    latest_proposal,
    mining_tickets,
    parse_proposal,
    precheck_message,
    registered_kinds,
    ticket_stream,
)
from ouroboros_gates.workers.proposer import (
    BATCH_SIZE,
    Batch,
    CensusRow,
    Draft,
    census_row,
    count,
    post,
    propose,
    shared_prefix,
)

__all__ = [
    "CALLS_STREAM",
    "Census",
    "Proposed",
    "census",
    "cost_lines",
    "cost_summary",
    "propose_tickets",
    "record_proposals",
    "recorded_calls",
]

CALLS_STREAM = "proposer/calls"


@dataclass
class Proposed:
    """What ``ouro propose`` did: each call's cost row, the tickets a comment was posted on, and what was
    refused (with why)."""

    calls: list[ProposerCall] = field(default_factory=list)
    posted: list[int] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


@dataclass
class Census:
    """The proposals measured against the contract, and a note per ticket that could not be measured."""

    rows: list[CensusRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def reaching(self) -> int:
        """The proposals that reach TP > 0 with the template's or a registered extractor."""
        return count(self.rows)


def recorded_calls(store: EventStore) -> list[ProposerCall]:
    """Every proposer call recorded, oldest first."""
    return [e.decode_as(ProposerCallCompleted).call for e in store.read_stream(CALLS_STREAM)]


def propose_tickets(
    settings: Settings, store: EventStore, forge: WritableForge, tickets: Sequence[int], batch: int | None
) -> Proposed:
    """Ask the configured chat model for a proposal per ticket (``batch`` tickets a call), post and record
    each, and publish the pre-checks they queue."""
    chosen = mining_tickets(forge, tickets)
    client = metered_from_settings(settings)
    if client is None or settings.model is None:
        raise ConfigurationError("OURO_MODEL: no chat model is configured; `ouro propose` asks one")
    batches = propose(
        chosen,
        client,
        shared_prefix(registered_kinds()),
        family=settings.model,
        clock=utcnow,
        load=_load,
        batch_size=batch or BATCH_SIZE,
    )
    done = record_proposals(batches, forge, store)
    relay_outbox(store)
    return done


def record_proposals(batches: Iterable[Batch], forge: WritableForge, store: EventStore) -> Proposed:
    """Post each batch's comments and append, per call, its cost row and, per comment posted, its
    ``ProposalPosted`` with a ``PrecheckTicket`` in the outbox."""
    done = Proposed()
    for item in batches:
        done.calls.append(item.call)
        done.refused += [why for why in (item.error, *item.refused) if why]
        _record_call(store, item.call)
        _post_drafts(item.drafts, forge, store, done)
    return done


def _record_call(store: EventStore, call: ProposerCall) -> None:
    """Append a paid call's cost row (a call replayed from the cache cost nothing)."""
    if not call.cached:
        key = content_id("proposer-call", call.to_json_dict())
        meta = Metadata(producer="proposer.call", message_id=key)
        store.commit([StreamWrite(CALLS_STREAM, [ProposerCallCompleted(call=call)])], meta)


def _post_drafts(drafts: Iterable[Draft], forge: WritableForge, store: EventStore, done: Proposed) -> None:
    """Post each draft as its ticket's proposal comment, and append ``ProposalPosted`` with a
    ``PrecheckTicket`` in the outbox per comment posted."""
    for draft in drafts:
        proposal = post(forge, draft)
        if proposal is None:
            continue
        key = content_id("posted", proposal.ticket, proposal.comment_id)
        follow = precheck_message(proposal.ticket, str(proposal.comment_id), None)
        writes = [StreamWrite(ticket_stream(proposal.ticket), [ProposalPosted(proposal=proposal)])]
        store.commit(writes, Metadata(producer="proposer.post", message_id=key), [follow])
        done.posted.append(proposal.ticket)


def census(settings: Settings, store: EventStore, forge: WritableForge, tickets: Sequence[int]) -> Census:
    """Each ticket's latest proposal measured against the miners (``census_row``); a ticket without one, or
    with a malformed one, is a note."""
    miners, _broken = discover()
    runs = RunIndex(store, settings.allowed_roots)
    found = Census()
    for ticket in mining_tickets(forge, tickets):
        comment = latest_proposal(ticket)
        if comment is None:
            found.notes.append(f"#{ticket.number}: no proposal")
            continue
        try:
            proposal = parse_proposal(
                comment.body, ticket=ticket.number, comment_id=comment.id, posted_at=comment.created_at
            )
        except ProposalFormatError as exc:
            found.notes.append(f"#{ticket.number}: malformed proposal, not measured: {exc}")
            continue
        found.rows.append(census_row(proposal, miners, runs.file))
    return found


def cost_lines(calls: Sequence[ProposerCall]) -> list[str]:
    """One line per call: family, tickets, artifacts, input, cache read, cache creation, output, USD, s,
    load."""
    row = "{:<16} {:<18} {:>3} {:>8} {:>8} {:>8} {:>7} {:>9} {:>7} {:>5}"
    lines = [
        row.format(
            "family", "tickets", "art", "input", "c.read", "c.write", "output", "USD", "wall s", "load"
        )
    ]
    for c in calls:
        tickets = ",".join(map(str, c.tickets))
        load = "-" if c.load is None else f"{c.load:.2f}"
        cost = "cached" if c.cached else f"{c.cost_usd:.4f}"
        lines.append(
            row.format(
                c.family[:16],
                tickets[:18],
                c.artifacts,
                c.input_tokens,
                c.cache_read_tokens,
                c.cache_creation_tokens,
                c.output_tokens,
                cost,
                f"{c.wall_s:.1f}",
                load,
            )
        )
    return lines


def cost_summary(calls: Sequence[ProposerCall]) -> str:
    """The sums over paid calls, as the first mining run's costs were summed (docs/loop.md, "First mining
    run"): calls, tickets, the largest batch, input, cache read, cache creation and output tokens, USD,
    call-seconds per ticket, and the prompt-cache hit ratio (cache read over every input token)."""
    paid = [c for c in calls if not c.cached]
    tickets = sum(len(c.tickets) for c in paid)
    largest = max((len(c.tickets) for c in paid), default=0)
    total = _sums(paid)
    given, read, created = total["input_tokens"], total["cache_read_tokens"], total["cache_creation_tokens"]
    return (
        f"{len(paid)} call(s), {tickets} ticket(s), at most {largest} a call;"
        f" input {given}, cache read {read}, cache creation {created},"
        f" output {total['output_tokens']} tokens; ${total['cost_usd']:.4f};"
        f" {_ratio(total['wall_s'], tickets):.1f} call-s per ticket;"
        f" cache hit ratio {_ratio(read, given + read + created):.4f}"
    )


_SUMMED = (
    "input_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "output_tokens",
    "cost_usd",
    "wall_s",
)


def _sums(paid: list[ProposerCall]) -> dict[str, float]:
    """Each summed field (``_SUMMED``) over the paid calls."""
    return {name: sum(getattr(c, name) for c in paid) for name in _SUMMED}


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else 0


def _load() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None

"""The proposer: one model call per batch of mining tickets, each answer turned into a proposal comment.

``propose`` asks the model (any ``Chat``: the metered client in production) for a predicate, facts, rules
and labelled instances per ticket, and returns per call its cost row (``ProposerCall``) and the comment
bodies to post, in the format the pre-check parses (``workers.prechecker.proposal``). An answer that does
not make a valid proposal is refused with why; a reply that is not the schema's JSON costs what it cost
and yields nothing. ``post`` puts a body on the forge unless the ticket's latest proposal already says it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from ouroboros_gates.forge import Ticket, WritableForge
from ouroboros_gates.llm import Chat, ChatReply, ReplyParseError
from ouroboros_gates.schemas import CorpusKind, Proposal, ProposerCall
from ouroboros_gates.workers.prechecker import latest_proposal, parse_proposal, render_proposal
from ouroboros_gates.workers.proposer.prompt import build_request

__all__ = ["BATCH_SIZE", "Batch", "Draft", "draft", "post", "propose"]

# 110 proposals in 17 calls on 2026-10-03 (docs/loop.md, "First mining run"): about 6.5 tickets a call.
BATCH_SIZE = 6

NOTE = "Proposal from `ouro propose` ({model}); not backtested."


@dataclass(frozen=True)
class Draft:
    """A proposal comment to post on ``ticket``."""

    ticket: int
    miner: str
    body: str


@dataclass(frozen=True)
class Batch:
    """One call: its cost row, the comments it drafted, and the answers refused (``#N: why``)."""

    call: ProposerCall
    drafts: tuple[Draft, ...]
    refused: tuple[str, ...]
    error: str = ""


def propose(
    tickets: Sequence[Ticket],
    chat: Chat,
    prefix: str,
    *,
    family: str,
    clock: Callable[[], datetime],
    load: Callable[[], float | None],
    batch_size: int = BATCH_SIZE,
) -> Iterator[Batch]:
    """One ``Batch`` per call, ``batch_size`` tickets a call, in ticket order."""
    for start in range(0, len(tickets), batch_size):
        batch = list(tickets[start : start + batch_size])
        request = build_request(prefix, batch)
        error = ""
        try:
            reply = chat.chat(request)
        except ReplyParseError as exc:
            if exc.reply is None:
                raise
            reply, error = exc.reply, f"the reply is not a proposal list: {exc}"
        drafts, refused = _drafts(reply, batch, clock()) if not error else ((), ())
        yield Batch(_cost_row(reply, batch, len(drafts), family, clock(), load()), drafts, refused, error)


def _cost_row(
    reply: ChatReply, batch: Sequence[Ticket], artifacts: int, family: str, at: datetime, load: float | None
) -> ProposerCall:
    usage = reply.usage
    return ProposerCall(
        family=family,
        model=reply.model or family,
        tickets=tuple(t.number for t in batch),
        artifacts=artifacts,
        input_tokens=usage.input_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_creation_tokens=usage.cache_creation_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=0.0 if reply.cached else reply.cost_usd,
        wall_s=reply.wall_s,
        load=load,
        cached=reply.cached,
        at=at,
    )


def _drafts(
    reply: ChatReply, batch: Sequence[Ticket], now: datetime
) -> tuple[tuple[Draft, ...], tuple[str, ...]]:
    wanted = {t.number for t in batch}
    answers = _Answers()
    for item in _answers(reply):
        answers.add(*_drafted(item, wanted, answers.drafts, reply.model, now))
    answers.refuse_unanswered(wanted)
    drafts = answers.drafts
    return tuple(drafts[t.number] for t in batch if t.number in drafts), answers.reasons()


@dataclass
class _Answers:
    """One reply's answers sorted: a draft per ticket, and the refusals grouped by ticket (None: not one of
    the batch), in the order they came."""

    drafts: dict[int, Draft] = field(default_factory=dict)
    refused: dict[int | None, list[str]] = field(default_factory=dict)

    def add(self, number: int | None, found: Draft | str) -> None:
        """One answer: its draft, or why it is refused."""
        if isinstance(found, Draft):
            self.drafts[found.ticket] = found
        else:
            self.refused.setdefault(number, []).append(str(found))

    def refuse_unanswered(self, wanted: set[int]) -> None:
        """Refuse each ticket of the batch the reply said nothing about, in ticket order."""
        for number in sorted(wanted - set(self.drafts) - set(self.refused)):
            self.refused[number] = [f"#{number}: no proposal in the reply"]

    def reasons(self) -> tuple[str, ...]:
        return tuple(reason for reasons in self.refused.values() for reason in reasons)


def _answers(reply: ChatReply) -> list[Any]:
    """The reply's ``proposals`` (none when its data is not an object)."""
    return reply.data.get("proposals", []) if isinstance(reply.data, dict) else []


def _drafted(
    item: Any, wanted: set[int], drafts: Mapping[int, Draft], model: str, now: datetime
) -> tuple[int | None, Draft | str]:
    """One answer's ticket (None when it is not one of the batch) and its draft, or why it is refused."""
    number = item.get("ticket") if isinstance(item, dict) else None
    if not isinstance(number, int) or number not in wanted:
        return None, f"#{number}: not a ticket of this batch"
    if number in drafts:
        return number, f"#{number}: a second proposal for the ticket"
    try:
        return number, draft(number, item, model, now)
    except ValueError as exc:
        return number, f"#{number}: {exc}"


def draft(ticket: int, item: Mapping[str, Any], model: str, now: datetime) -> Draft:
    """The comment for one answer; ``ValueError`` says why it is not a valid proposal."""
    instances = tuple(item["instances"])
    proposal = _proposal(ticket, item, instances, _labels(item, instances), now)
    body = render_proposal(proposal, note=NOTE.format(model=model))
    parse_proposal(body, ticket=ticket, comment_id=1, posted_at=now)  # the pre-check must read it back
    return Draft(ticket, proposal.miner, body)


def _labels(item: Mapping[str, Any], instances: tuple[str, ...]) -> tuple[str, ...]:
    """The answer's labels as ``instance<TAB>sign``; ``ValueError`` when one names an instance it does not
    list."""
    labels = tuple(f"{label['instance']}\t{label['sign']}" for label in item["labels"])
    stray = [label["instance"] for label in item["labels"] if label["instance"] not in instances]
    if stray:
        raise ValueError(f"labels name {stray[0]!r}, which is not one of its instances")
    return labels


def _proposal(
    ticket: int, item: Mapping[str, Any], instances: tuple[str, ...], labels: tuple[str, ...], now: datetime
) -> Proposal:
    """The answer as a proposal; ``ValueError`` names the first field the model refuses."""
    try:
        return Proposal(
            ticket=ticket,
            comment_id=1,
            miner=item["miner"],
            corpus=tuple(CorpusKind(k) for k in item["corpus"]),
            instances=instances,
            predicate=item["predicate"],
            facts=tuple(item["facts"]),
            rules=item["rules"],
            labels=labels,
            posted_at=now,
        )
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise ValueError(f"{'.'.join(map(str, first['loc']))}: {first['msg']}") from exc


def post(forge: WritableForge, draft: Draft) -> Proposal | None:
    """Post ``draft`` on its ticket and return the proposal as posted; None when the ticket's latest
    proposal comment already says exactly this (a replayed answer is not posted twice)."""
    latest = latest_proposal(forge.ticket(draft.ticket))
    if latest is not None and latest.body == draft.body:
        return None
    comment = forge.comment(draft.ticket, draft.body)
    return parse_proposal(
        comment.body, ticket=draft.ticket, comment_id=comment.id, posted_at=comment.created_at
    )

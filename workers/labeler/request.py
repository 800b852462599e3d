"""Step 1: a label request, completed from the ticket.

The request is the loop's queue row (ticket, proposal, miner, corpus kinds, the instances that named
nothing, the pre-check's reason) plus the labeler's own reading of the ticket: the predicate from its
title and body (and the proposal's own predicate), the miner, corpus kinds and fact lines from its latest
proposal comment (an ``ouroboros-proposal`` fenced TOML block). Every value the row carries is kept.
A proposal that is not valid TOML is read key by key, so its readable keys still count; the keys that
could not be read are named in the job's notes.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from typing import Any

from ouroboros_gates.forge import Ticket
from ouroboros_gates.schemas import CorpusKind, LabelRequest

__all__ = ["Job", "complete", "proposal_fields"]

_BLOCK = re.compile(r"```ouroboros-proposal[ \t]*\n(.*?)\n```", re.DOTALL)
_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*=", re.MULTILINE)


@dataclass(frozen=True)
class Job:
    """A request made whole: what to search, for which predicate, and the ticket's own words."""

    ticket: int
    proposal: int | None
    miner: str | None
    corpus: tuple[CorpusKind, ...]
    instances: tuple[str, ...]
    reason: str
    predicate: str
    facts: tuple[str, ...]
    words: str
    notes: tuple[str, ...] = ()


def proposal_fields(body: str) -> tuple[dict[str, Any], tuple[str, ...]] | None:
    """The keys of the comment's last proposal block, and the keys that could not be read; None if none."""
    blocks = _BLOCK.findall(body)
    if not blocks:
        return None
    text = blocks[-1]
    try:
        return tomllib.loads(text), ()
    except tomllib.TOMLDecodeError:
        return _read_by_key(text)


def _read_by_key(text: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A block that is not valid TOML read one key at a time: the keys read, and those that could not be."""
    fields: dict[str, Any] = {}
    unreadable: list[str] = []
    starts = list(_KEY.finditer(text))
    for match, following in zip(starts, [*starts[1:], None], strict=True):
        chunk = text[match.start() : following.start() if following else len(text)]
        try:
            fields.update(tomllib.loads(chunk))
        except tomllib.TOMLDecodeError:
            unreadable.append(match.group(1))
    return fields, tuple(unreadable)


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(v) for v in value if isinstance(v, str | int | float))
    return ()


def _kinds(values: tuple[str, ...]) -> tuple[CorpusKind, ...]:
    known = {kind.value: kind for kind in CorpusKind}
    return tuple(dict.fromkeys(known[v] for v in values if v in known))


def _latest_proposal(ticket: Ticket) -> tuple[int | None, dict[str, Any], tuple[str, ...]]:
    for comment in reversed(ticket.comments):
        found = proposal_fields(comment.body)
        if found is not None:
            return comment.id, found[0], found[1]
    return None, {}, ()


def words_of(ticket: Ticket) -> str:
    """The ticket's own words: its title, body and every comment."""
    return "\n".join([ticket.title, ticket.body, *(comment.body for comment in ticket.comments)])


def complete(request: LabelRequest | None, ticket: Ticket) -> Job:
    """The job for ``ticket``: the row's values kept, the rest read from the ticket and its latest
    proposal."""
    comment, fields, unreadable = _latest_proposal(ticket)
    notes = _proposal_notes(comment, unreadable)
    corpus = _corpus(request, fields, notes)
    return Job(
        ticket=ticket.number,
        proposal=_kept(request, "proposal") or comment,
        miner=_miner(request, fields),
        corpus=corpus,
        instances=_kept(request, "instances") or _strings(fields.get("instances")),
        reason=request.reason if request else "",
        predicate=_predicate(ticket, fields),
        facts=_strings(fields.get("facts")),
        words=words_of(ticket),
        notes=tuple(notes),
    )


def _proposal_notes(comment: int | None, unreadable: tuple[str, ...]) -> list[str]:
    """What the job notes about the proposal: its unreadable keys, or that there is none."""
    notes = [f"proposal {comment}: unreadable keys {', '.join(unreadable)}"] if unreadable else []
    if comment is None:
        notes.append("the ticket has no proposal: searching with its title and body only")
    return notes


def _corpus(request: LabelRequest | None, fields: dict[str, Any], notes: list[str]) -> tuple[CorpusKind, ...]:
    """The row's corpus kinds, else the proposal's, else the runs (noted)."""
    corpus = _kept(request, "corpus") or _kinds(_strings(fields.get("corpus")))
    if not corpus:
        corpus = (CorpusKind.JSONL,)
        notes.append("no corpus kind named: searching the runs (jsonl)")
    return corpus


def _miner(request: LabelRequest | None, fields: dict[str, Any]) -> str | None:
    """The row's miner, else the proposal's first, else None."""
    return _kept(request, "miner") or (_strings(fields.get("miner")) or (None,))[0]


def _kept(request: LabelRequest | None, name: str) -> Any:
    """The row's value of ``name`` when there is a row and the value is not empty (else None): what the
    row carries is kept over the ticket's reading."""
    return getattr(request, name) or None if request else None


def _predicate(ticket: Ticket, fields: dict[str, Any]) -> str:
    """The ticket's title and body and the proposal's own predicate, the empty ones left out."""
    return "\n".join(p for p in (ticket.title, ticket.body, *_strings(fields.get("predicate"))) if p)

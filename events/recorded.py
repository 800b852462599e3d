"""What the log knew at a time: the runs recorded and the labels proposed, for a backtest as of then.

A backtest judged "as of" a time must see only the corpus and the labels recorded by then, so both are
read from the events themselves (their ``recorded_at``), not from the projections' current rows. An
operator's review of a proposed label (``LabelReviewed``) recorded by then stands over the labeler's own
check.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import ColumnElement

from ouroboros_gates.events import tables as t
from ouroboros_gates.events.sql import read_where
from ouroboros_gates.events.store import LedgerStore, StoredEvent
from ouroboros_gates.schemas import (
    Acceptance,
    LabelProposed,
    LabelRequested,
    LabelReviewed,
    ProposalPosted,
    ProposedLabel,
    Review,
    RunRecorded,
)

__all__ = ["RecordedLabel", "RecordedRun", "recorded_labels", "recorded_runs"]


@dataclass(frozen=True)
class RecordedRun:
    """A run as last recorded by then: where it lies and when it started (None: no timestamp seen)."""

    run: str
    path: Path
    started: datetime | None


@dataclass(frozen=True)
class RecordedLabel:
    """One instance's label as the ledger held it: + when any accepted positive was recorded for it."""

    instance: str
    positive: bool
    flagged: datetime | None
    source: str


def _events(store: LedgerStore, types: tuple[str, ...], as_of: datetime | None) -> list[StoredEvent]:
    where: list[ColumnElement[bool]] = [t.events.c.type.in_(types)]
    if as_of is not None:
        where.append(t.events.c.recorded_at <= as_of)
    with store.reading() as conn:
        return read_where(conn, *where)


def recorded_runs(store: LedgerStore, as_of: datetime | None = None) -> list[RecordedRun]:
    """Every run recorded by ``as_of`` (all when None), each once as last recorded, in run order."""
    runs: dict[str, RecordedRun] = {}
    for stored in _events(store, (RunRecorded.TYPE,), as_of):
        event = stored.decode_as(RunRecorded)
        runs[event.run] = RecordedRun(event.run, Path(event.path), event.summary.started_at)
    return [runs[run] for run in sorted(runs)]


def _tickets(store: LedgerStore, miner: str, as_of: datetime | None) -> set[int]:
    """The tickets whose proposal or label request, recorded by then, names ``miner``."""
    tickets: set[int] = set()
    for stored in _events(store, (ProposalPosted.TYPE, LabelRequested.TYPE), as_of):
        event = stored.decode()
        named = (
            event.proposal
            if isinstance(event, ProposalPosted)
            else event.request
            if isinstance(event, LabelRequested)
            else None
        )
        if named is not None and named.miner == miner:
            tickets.add(named.ticket)
    return tickets


def recorded_labels(store: LedgerStore, miner: str, as_of: datetime | None = None) -> list[RecordedLabel]:
    """The labels proposed by ``as_of`` for the tickets whose proposal or label request names ``miner``.

    A rejected positive is no label at all; an instance is + when an accepted positive was recorded for
    it (flagged when the first was recorded), else - when a negative was. An operator's latest review by
    then decides instead of the labeler's check: rejected is no label, accepted stands.
    """
    tickets = _tickets(store, miner, as_of)
    reviews = _reviews(store, as_of)
    found: dict[str, RecordedLabel] = {}
    for stored in _events(store, (LabelProposed.TYPE,), as_of):
        label = stored.decode_as(LabelProposed).label
        if label.ticket not in tickets or _refused(label, reviews.get(stored.position)):
            continue
        before = found.get(label.instance)
        if before is None or (
            label.positive and not before.positive
        ):  # a + outweighs a -, the first + stands
            flagged = stored.recorded_at if label.positive else None
            found[label.instance] = RecordedLabel(
                label.instance, label.positive, flagged, f"ticket/{label.ticket}"
            )
    return [found[instance] for instance in sorted(found)]


def _reviews(store: LedgerStore, as_of: datetime | None) -> dict[int, Review]:
    """The operator's latest review of each proposed label (by its log position), recorded by then."""
    events = _events(store, (LabelReviewed.TYPE,), as_of)
    return {review.label: review.review for review in (stored.decode_as(LabelReviewed) for stored in events)}


def _refused(label: ProposedLabel, review: Review | None) -> bool:
    """No label at all: rejected by the operator's review, or (none) by the labeler's own check."""
    return review is Review.REJECTED if review else label.acceptance is Acceptance.REJECTED

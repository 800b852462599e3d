"""What the log knew at a time: the runs recorded and the labels proposed, for a backtest as of then.

A backtest judged "as of" a time must see only the corpus and the labels recorded by then, so both are
read from the events themselves (their ``recorded_at``), not from the projections' current rows. An
operator's review of a proposed label (``LabelReviewed``) recorded by then stands over the labeler's own check.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import select

from ouroboros_gates.events import tables as t
from ouroboros_gates.events.sql import SqlEventStore

__all__ = ["RecordedLabel", "RecordedRun", "recorded_labels", "recorded_runs"]

_REJECTED = "ACCEPTANCE_REJECTED"
_REVIEW_REJECTED = "rejected"


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


def _events(
    store: SqlEventStore, types: tuple[str, ...], as_of: datetime | None
) -> Iterator[tuple[int, Any, datetime]]:
    ev = t.events.c
    query = select(ev.position, ev.payload, ev.recorded_at).where(ev.type.in_(types))
    if as_of is not None:
        query = query.where(ev.recorded_at <= as_of)
    with store.reading() as conn:
        rows = conn.execute(query.order_by(ev.position)).all()
    for position, payload, at in rows:
        body = orjson.loads(payload) if isinstance(payload, str | bytes) else payload
        yield int(position), body, (at if at.tzinfo else at.replace(tzinfo=UTC))


def recorded_runs(store: SqlEventStore, as_of: datetime | None = None) -> list[RecordedRun]:
    """Every run recorded by ``as_of`` (all when None), each once as last recorded, in run order."""
    runs: dict[str, RecordedRun] = {}
    for _position, body, _at in _events(store, ("RunRecorded",), as_of):
        started = body["summary"].get("started_at")
        moment = datetime.fromisoformat(started.replace("Z", "+00:00")) if started else None
        runs[body["run"]] = RecordedRun(body["run"], Path(body["path"]), moment)
    return [runs[run] for run in sorted(runs)]


def recorded_labels(store: SqlEventStore, miner: str, as_of: datetime | None = None) -> list[RecordedLabel]:
    """The labels proposed by ``as_of`` for the tickets whose proposal or label request names ``miner``.

    A rejected positive is no label at all; an instance is + when an accepted positive was recorded for
    it (flagged when the first was recorded), else - when a negative was. An operator's latest review by
    then decides instead of the labeler's check: rejected is no label, accepted stands.
    """
    tickets = {
        body["proposal"]["ticket"] if "proposal" in body else body["request"]["ticket"]
        for _position, body, _at in _events(store, ("ProposalPosted", "LabelRequested"), as_of)
        if (body.get("proposal") or body.get("request") or {}).get("miner") == miner
    }
    reviews = {body["label"]: body["review"] for _position, body, _at in _events(store, ("LabelReviewed",), as_of)}
    found: dict[str, RecordedLabel] = {}
    for position, body, at in _events(store, ("LabelProposed",), as_of):
        label = body["label"]
        review = reviews.get(position)
        refused = review == _REVIEW_REJECTED if review else label["acceptance"] == _REJECTED
        if label["ticket"] not in tickets or refused:
            continue
        before = found.get(label["instance"])
        if before is not None and (before.positive or not label["positive"]):
            continue
        flagged = at if label["positive"] else None
        source = f"ticket/{label['ticket']}"
        found[label["instance"]] = RecordedLabel(label["instance"], label["positive"], flagged, source)
    return [found[instance] for instance in sorted(found)]

"""The operator's actions, decided from the log: each returns the events to append (and, for a retry, the
message to queue through the outbox in the same transaction); the API appends them (``ops.api._actions``).

    ActionError               (schemas.errors.OuroError) an action that cannot be taken; the API answers its
    status
    ├── NothingThere          404: no dead letter, decision, label or miner by that name
    └── NotPossible           409: it exists, but the action cannot apply (a dead letter whose message was not
    kept)

Every action is keyed (``Action.key``) so that the same action taken twice (a double click) appends once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, select

from ouroboros_gates.decider.decide import fingerprint
from ouroboros_gates.events import LedgerStore, read_where
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.projections import actions, decisions
from ouroboros_gates.schemas import (
    MESSAGE_TYPES,
    Candidate,
    DeadLetterRetried,
    DecisionDismissed,
    Event,
    LabelProposed,
    LabelReviewed,
    Message,
    MessageDeadLettered,
    Review,
    content_id,
)
from ouroboros_gates.schemas.errors import OuroError

__all__ = ["Action", "ActionError", "NotPossible", "NothingThere", "dismiss", "retry", "review"]


class ActionError(OuroError):
    """An operator's action that cannot be taken."""

    status = 400


class NothingThere(ActionError):
    """What the action names does not exist."""

    status = 404


class NotPossible(ActionError):
    """What the action names exists, but the action cannot apply to it."""

    status = 409


@dataclass(frozen=True)
class Action:
    """An action decided: events for one stream, its idempotency key, and messages to queue with them."""

    stream: str
    events: tuple[Event, ...]
    key: str
    follow_ups: tuple[Message, ...] = ()


def _dead_letter(store: LedgerStore, message_id: str) -> dict[str, Any]:
    ev = t.events.c
    named = (ev.type == MessageDeadLettered.TYPE, ev.payload["message_id"].as_string() == message_id)
    with store.reading() as conn:
        found = read_where(conn, *named, limit=1, newest_first=True)
        if not found:
            raise NothingThere(f"no dead letter with message id {message_id!r}")
        body = found[0].decode_as(MessageDeadLettered).to_json_dict()
        if not body.get(
            "message"
        ):  # recorded before dead letters kept their message: a follow-up's is queued
            kept = select(t.outbox.c.payload).where(t.outbox.c.message_id == message_id)
            body["message"] = conn.execute(kept).scalar_one_or_none()
        attempts = conn.execute(
            select(func.count()).where(
                ev.type == "DeadLetterRetried", ev.payload["message_id"].as_string() == message_id
            )
        ).scalar_one()
    body["retries"] = int(attempts)
    return body


def _message_type(task: object) -> type[Message] | None:
    """The message type a task handles (None for a task no message type names)."""
    return next((cls for cls in MESSAGE_TYPES.values() if task == cls.TASK), None)


def retry(store: LedgerStore, message_id: str, now: datetime, note: str = "") -> Action:
    """Send a dead-lettered message again, as a new message (its own id, caused by the one that failed)."""
    body = _dead_letter(store, message_id)
    kind = _message_type(body["task"])
    if not body["message"] or kind is None:
        raise NotPossible(f"dead letter {message_id}: its message was not kept, so it cannot be sent again")
    attempt = body["retries"] + 1
    again = {**body["message"], "message_id": content_id("retry", message_id, attempt)}
    again["causation_id"] = message_id
    again["correlation_id"] = body["message"].get("correlation_id") or message_id
    message = kind.model_validate(again)
    event = DeadLetterRetried(
        task=body["task"],
        message_id=message_id,
        retry_message_id=message.message_id,
        attempt=attempt,
        at=now,
        note=note,
    )
    return Action(f"fleet/retry/{message_id}", (event,), message.message_id, (message,))


def dismiss(store: LedgerStore, candidate: Candidate, now: datetime, note: str = "") -> Action:
    """Dismiss the decision on ``candidate`` (the decision stays; the ledger marks it dismissed)."""
    table = decisions.decisions
    match = and_(
        *(table.c[k] == getattr(candidate, k) for k in ("repo", "pin", "path", "function", "family"))
    )
    with store.reading() as conn:
        if conn.execute(select(table.c.position).where(match)).first() is None:
            raise NothingThere(f"no decision on {candidate.key}")
    event = DecisionDismissed(candidate=candidate, fingerprint=fingerprint(candidate), at=now, note=note)
    return Action(f"push/{candidate.pin}", (event,), content_id("dismiss", candidate.key))


def review(store: LedgerStore, label: int, verdict: Review, now: datetime, note: str = "") -> Action | None:
    """Accept or reject the proposed label at log position ``label``; None when it is already so reviewed."""
    ev, reviews = t.events.c, actions.label_reviews
    with store.reading() as conn:
        found = read_where(conn, ev.position == label, ev.type == LabelProposed.TYPE)
        current = conn.execute(
            select(reviews.c.review, reviews.c.position).where(reviews.c.label == label)
        ).first()
    if not found:
        raise NothingThere(f"no proposed label at log position {label}")
    if current is not None and current[0] == verdict.value:
        return None
    proposed = found[0].decode_as(LabelProposed).label
    event = LabelReviewed(
        label=label, ticket=proposed.ticket, instance=proposed.instance, review=verdict, at=now, note=note
    )
    # Keyed by the review it replaces, so one change of mind is one event however often it is sent.
    key = content_id("review", label, verdict.value, current[1] if current else None)
    return Action(f"ticket/{proposed.ticket}", (event,), key)

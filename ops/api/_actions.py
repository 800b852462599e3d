"""The routes that write, each behind the bearer token: publish a message, catch up or rebuild the ledger, and
the operator's actions (retry a dead letter, dismiss a decision, review a label, replay a backtest), each
appended as an event (``ops.actions``, ``ops.backtests``) and folded into the ledger at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Path, Query
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import select

from ouroboros_gates.events import Metadata, StreamWrite, utcnow
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import catch_up, digest, rebuild
from ouroboros_gates.ops.api._common import MAX_POSITION, Deps
from ouroboros_gates.ops.api._http import WRITE_RESPONSES, token_check
from ouroboros_gates.ops.api.models import (
    DismissRecorded,
    Problem,
    Published,
    ReplayDone,
    ReplayRecorded,
    Retried,
    Reviewed,
)
from ouroboros_gates.schemas import MESSAGE_TYPES, Candidate, Review
from ouroboros_gates.schemas.errors import OuroError

__all__ = ["action_routes"]

_NOTE = Field(default="", max_length=500, description="The operator's note, kept on the event.")


class RetryRequest(BaseModel):
    """Send a dead letter again."""

    model_config = ConfigDict(extra="forbid")

    note: str = _NOTE


class DismissRequest(BaseModel):
    """Dismiss the decision on a candidate."""

    model_config = ConfigDict(extra="forbid")

    candidate: Candidate
    note: str = _NOTE


class ReviewRequest(BaseModel):
    """Accept or reject a proposed label."""

    model_config = ConfigDict(extra="forbid")

    review: Review
    note: str = _NOTE


class ReplayRequest(BaseModel):
    """Re-run a miner's backtest on the log as it stood at ``as_of``."""

    model_config = ConfigDict(extra="forbid")

    as_of: AwareDatetime = Field(
        description="An instant with its offset, e.g. 2026-10-04T09:00:00-07:00; a later one than now is now."
    )


def action_routes(api: FastAPI, deps: Deps) -> None:
    """Publish, replay, and the four actions; every one needs the token."""
    secured = {
        "dependencies": [Depends(token_check(deps.settings))],
        "responses": _responses(),
        "tags": ["write"],
    }
    _log_routes(api, deps, secured)
    _operator_routes(api, deps, secured)


_MISSING = {404: {"description": "What the action names does not exist.", "model": Problem}}
_CONFLICT = {409: {"description": "Its message was not kept: it cannot be sent again.", "model": Problem}}


def _responses() -> dict[int | str, dict[str, Any]]:
    return {code: {**entry, "model": Problem} for code, entry in WRITE_RESPONSES.items()}


def _with(secured: dict[str, Any], *more: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """The write's options with the route's own error answers documented beside the shared ones."""
    responses = dict(secured["responses"])
    for answers in more:
        responses.update(answers)
    return {**secured, "responses": responses}


def _record(deps: Deps, producer: str, action: Any) -> int | None:
    """Append an action's events (and queue its messages) in one transaction; fold them into the ledger;
    publish what it queued. The position of its event, or None when the same action was recorded already."""
    meta = Metadata(producer=producer, message_id=action.key, tenant=deps.settings.tenant)
    result = deps.store.commit([StreamWrite(action.stream, action.events)], meta, action.follow_ups)
    catch_up(deps.store, PROJECTIONS)
    if action.follow_ups:
        from ouroboros_gates.workers import relay_outbox

        relay_outbox(deps.store, publisher=deps.broker)
    return None if result.duplicate else result.positions[0]


def _refused(exc: OuroError) -> HTTPException:
    from ouroboros_gates.miners import MinerNotFoundError

    status = 404 if isinstance(exc, MinerNotFoundError) else int(getattr(exc, "status", 400))
    return HTTPException(status, str(exc))


def _log_routes(api: FastAPI, deps: Deps, secured: dict[str, Any]) -> None:
    @api.post("/api/publish/{type_name}", response_model=Published, **_with(secured, _MISSING))
    def publish(type_name: Annotated[str, Path(max_length=100)], body: dict[str, Any]) -> dict[str, str]:
        """Publish a message of a contract type onto its worker's queue (422 names each invalid field)."""
        from ouroboros_gates.workers import publish as send

        cls = MESSAGE_TYPES.get(type_name)
        if cls is None:
            raise HTTPException(status_code=404, detail=f"unknown message type {type_name!r}")
        try:
            message = cls.model_validate(body)
        except ValidationError as exc:
            raise HTTPException(422, exc.errors(include_url=False, include_context=False)) from None
        send(message, via=deps.broker)
        return {"message_id": message.message_id, "task": message.TASK}

    @api.post("/api/replay", response_model=ReplayDone, **secured)
    def replay(rebuild_all: Annotated[bool, Query(alias="rebuild")] = False) -> dict[str, Any]:
        """Catch the ledger up with the log (``rebuild=true``: empty it and refold from position 0)."""
        applied = rebuild(deps.store, PROJECTIONS) if rebuild_all else catch_up(deps.store, PROJECTIONS)
        return {"rebuilt": rebuild_all, "applied": applied, "digest": digest(deps.store, PROJECTIONS)}


def _operator_routes(api: FastAPI, deps: Deps, secured: dict[str, Any]) -> None:
    store = deps.store

    def taken(decide: Callable[[], Any], producer: str) -> tuple[Any, int | None]:
        try:
            action = decide()
        except OuroError as exc:
            raise _refused(exc) from None
        return action, (None if action is None else _record(deps, producer, action))

    @api.post(
        "/api/actions/dead_letters/{message_id}/retry",
        response_model=Retried,
        **_with(secured, _MISSING, _CONFLICT),
    )
    def retry(message_id: Annotated[str, Path(max_length=128)], body: RetryRequest) -> dict[str, Any]:
        """Send a dead-lettered message again, as a new message queued through the outbox."""
        from ouroboros_gates.ops.actions import retry as decide

        action, position = taken(lambda: decide(store, message_id, utcnow(), body.note), "ops.api.retry")
        sent = action.follow_ups[0]
        with store.reading() as conn:
            published = conn.execute(
                select(t.outbox.c.published_at).where(t.outbox.c.message_id == sent.message_id)
            ).scalar_one_or_none()
        attempt = action.events[0].attempt
        return {
            "position": position,
            "retry_message_id": sent.message_id,
            "attempt": attempt,
            "published": published is not None,
        }

    @api.post("/api/actions/decisions/dismiss", response_model=DismissRecorded, **_with(secured, _MISSING))
    def dismiss(body: DismissRequest) -> dict[str, Any]:
        """Dismiss the decision on a candidate; the ledger marks it dismissed with the note."""
        from ouroboros_gates.ops.actions import dismiss as decide

        _action, position = taken(
            lambda: decide(store, body.candidate, utcnow(), body.note), "ops.api.dismiss"
        )
        return {"position": position, "candidate": body.candidate.to_json_dict()}

    @api.post("/api/actions/labels/{label}/review", response_model=Reviewed, **_with(secured, _MISSING))
    def review(label: Annotated[int, Path(ge=1, le=MAX_POSITION)], body: ReviewRequest) -> dict[str, Any]:
        """Accept or reject a proposed label (by its log position); the ledger's labels follow the review."""
        from ouroboros_gates.ops.actions import review as decide

        _action, position = taken(
            lambda: decide(store, label, body.review, utcnow(), body.note), "ops.api.review"
        )
        return {"position": position, "label": label, "review": body.review.value}

    @api.post("/api/actions/miners/{miner}/replay", response_model=ReplayRecorded, **_with(secured, _MISSING))
    def replay_backtest(miner: Annotated[str, Path(max_length=64)], body: ReplayRequest) -> dict[str, Any]:
        """Re-run a miner's backtest on the runs and labels the log had recorded by ``as_of``."""
        from ouroboros_gates.ops.actions import Action
        from ouroboros_gates.ops.backtests import replay_backtest as run
        from ouroboros_gates.schemas import content_id

        now = utcnow()
        as_of = min(body.as_of, now)  # the log holds nothing later than now
        head = store.head()  # the same replay of the same log is recorded once

        def decide() -> Action:
            event = run(store, miner, as_of, now)
            return Action(f"miner/{event.miner}", (event,), content_id("replay", event.miner, as_of, head))

        action, position = taken(decide, "ops.api.replay")
        return {"position": position, "replay": action.events[0]}

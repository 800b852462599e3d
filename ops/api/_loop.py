"""The loop's routes: the measurer's snapshot, accepted miners, the labeler, spend, the decider's decisions,
proposed labels with their reviews, and dead letters with their retries."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any, Literal

import orjson
from fastapi import FastAPI, HTTPException, Query
from pydantic import ValidationError
from sqlalchemy import and_, func, select, true

from ouroboros_gates.events import read_where
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.projections import actions, decisions, faults, labels
from ouroboros_gates.ops.api._common import MAX_POSITION, After, Deps, Limit, Offset, iso, page
from ouroboros_gates.ops.api.models import (
    BacktestsPage,
    DeadLettersPage,
    DecisionsPage,
    LabelerShown,
    LabelsPage,
    Snapshot,
    SpendShown,
)
from ouroboros_gates.ops.metrics import spend_today
from ouroboros_gates.schemas import LabelerRun, MessageDeadLettered, MinerAccepted, Scope

__all__ = ["loop_routes"]

Before = Annotated[int | None, Query(ge=1, le=MAX_POSITION, description="Only rows before this position.")]
_KEY = ("repo", "pin", "path", "function", "family")


def loop_routes(api: FastAPI, deps: Deps) -> None:
    """Snapshot, acceptances, labeler, spend; then decisions, labels and dead letters."""
    _measured_routes(api, deps)
    _decision_routes(api, deps)
    _queue_routes(api, deps)


def _measured_routes(api: FastAPI, deps: Deps) -> None:
    settings = deps.settings

    @api.get(
        "/api/ouroboros",
        response_model=Snapshot,
        tags=["loop"],
        responses={404: {"description": "None yet."}},
    )
    def ouroboros() -> Any:
        """The measurer's snapshot: the latest series, h_fleet with its offenders, accepted miners by
        scope."""
        from ouroboros_gates.workers.measurer import snapshot_path

        path = snapshot_path(settings)
        if not path.is_file():
            raise HTTPException(
                404, f"no snapshot yet: {path.name} is written by the measurer (ouro measure)"
            )
        return orjson.loads(path.read_bytes())

    @api.get("/api/backtests", response_model=BacktestsPage, tags=["loop"])
    def backtests(after: After = 0, limit: Limit = 100) -> dict[str, Any]:
        """Every miner's acceptance (it became a gate): scope, backtest row, mutation score."""
        ev = t.events.c
        with deps.store.reading() as conn:
            found = read_where(conn, ev.type == MinerAccepted.TYPE, ev.position > after)
        shown = []
        for event in found:
            acceptance = event.decode_as(MinerAccepted).acceptance
            if event.meta.get("tenant") == settings.tenant or acceptance.scope is Scope.GENERIC:
                at = iso(event.recorded_at)
                shown.append({"position": event.position, "recorded_at": at, **acceptance.to_json_dict()})
        return page(shown[:limit], limit)

    @api.get(
        "/api/labeler", response_model=LabelerShown, tags=["loop"], responses={404: {"description": "None."}}
    )
    def labeler() -> dict[str, Any]:
        """The labeler's run: ``labeler.json`` while it runs, else the ledger's latest."""
        record = settings.state_dir / "labeler.json"
        if record.is_file():
            try:
                return {"source": "labeler.json", "run": LabelerRun.model_validate_json(record.read_bytes())}
            except (OSError, ValidationError):  # being rewritten, or not ours: the ledger's latest run
                pass
        runs = labels.labeler_runs
        latest = deps.rows(select(runs).order_by(runs.c.position.desc()).limit(1))
        if not latest:
            raise HTTPException(404, "no labeler run yet (neither labeler.json nor a LabelerRunCompleted)")
        return {"source": "ledger", "run": latest[0]["record"]}

    @api.get("/api/spend", response_model=SpendShown, tags=["loop"])
    def spend() -> dict[str, Any]:
        """Fixer spend on today's budget day (in the loop's zone) against the daily cap."""
        today = spend_today(deps.store, deps.zone, deps.cap_usd)
        return {**asdict(today), "fixers_on": today.fixers_on, "remaining_usd": today.remaining_usd}


def _decision_routes(api: FastAPI, deps: Deps) -> None:
    table, dismissed = decisions.decisions, actions.dismissals
    joined = table.outerjoin(dismissed, and_(*(table.c[k] == dismissed.c[k] for k in _KEY)))
    columns = [
        *table.c,
        dismissed.c.at.label("dismissed_at"),
        dismissed.c.note.label("dismissed_note"),
        dismissed.c.position.label("dismissed_position"),
    ]

    @api.get("/api/decisions", response_model=DecisionsPage, tags=["decider"])
    def decisions_(
        repo: Annotated[str | None, Query(max_length=200)] = None,
        operating_point: Literal["block", "advisory", "drop"] | None = None,
        limit: Limit = 100,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        """The decider's decisions, newest first, each with its flows, rationale and dismissal."""
        by_repo = [table.c.repo == repo] if repo is not None else []
        where = and_(
            true(), *by_repo, *([table.c.action == operating_point.upper()] if operating_point else [])
        )
        query = (
            select(*columns)
            .select_from(joined)
            .where(where)
            .order_by(table.c.position.desc(), *table.c[_KEY])
        )
        rows = [_decision(row) for row in deps.rows(query.offset(offset).limit(limit))]
        total = int(deps.scalar(select(func.count()).select_from(table).where(where)))
        with deps.store.reading() as conn:
            repos = [
                str(r) for r in conn.execute(select(table.c.repo).distinct().order_by(table.c.repo)).scalars()
            ]
            counted = conn.execute(
                select(table.c.action, func.count()).where(*by_repo).group_by(table.c.action)
            )
            counts = {"block": 0, "advisory": 0, "drop": 0} | {str(a).lower(): int(n) for a, n in counted}
        return {
            "rows": rows,
            "total": total,
            "offset": offset,
            "limit": limit,
            "repos": repos,
            "counts": counts,
            "next_offset": offset + limit if offset + limit < total else None,
        }


def _decision(row: dict[str, Any]) -> dict[str, Any]:
    at, note, position = row.pop("dismissed_at"), row.pop("dismissed_note"), row.pop("dismissed_position")
    row["operating_point"] = str(row["action"]).lower()
    row["flows"] = row["flows"] or []
    row["dismissed"] = None if at is None else {"at": at, "note": note, "position": position}
    return row


def _queue_routes(api: FastAPI, deps: Deps) -> None:
    @api.get("/api/labels", response_model=LabelsPage, tags=["loop"])
    def labels_(
        after: After = 0,
        limit: Limit = 100,
        ticket: Annotated[int | None, Query(ge=1, le=MAX_POSITION)] = None,
    ) -> dict[str, Any]:
        """Proposed labels in log order, each with the labeler's check and the operator's review."""
        table, reviews = labels.labels, actions.label_reviews
        query = select(
            table, reviews.c.review, reviews.c.at, reviews.c.note, reviews.c.position.label("reviewed")
        )
        query = query.select_from(table.outerjoin(reviews, reviews.c.label == table.c.position))
        query = query.where(table.c.position > after, *([table.c.ticket == ticket] if ticket else []))
        rows = deps.rows(query.order_by(table.c.position).limit(limit))
        for row in rows:
            review = {k: row.pop(k) for k in ("review", "at", "note")} | {"position": row.pop("reviewed")}
            row["review"] = review if review["review"] else None
        return page(rows, limit)

    @api.get("/api/dead_letters", response_model=DeadLettersPage, tags=["fleet"])
    def dead_letters(before: Before = None, limit: Limit = 100) -> dict[str, Any]:
        """Messages the fleet gave up on, newest first, and their latest retry from the ops page."""
        table, retries = faults.faults, actions.dead_letter_retries
        kept = _kept_messages(deps)
        query = select(
            table,
            retries.c.attempt,
            retries.c.retry_message_id,
            retries.c.at,
            retries.c.position.label("retried"),
        )
        query = query.select_from(table.outerjoin(retries, retries.c.message_id == table.c.message_id))
        query = query.where(table.c.kind == "dead_letter", *([table.c.position < before] if before else []))
        rows = []
        for row in deps.rows(query.order_by(table.c.position.desc()).limit(limit)):
            retry = {k: row.pop(k) for k in ("attempt", "retry_message_id", "at")} | {
                "position": row.pop("retried")
            }
            detail = row.pop("detail")
            rows.append(
                {
                    **row,
                    **detail,
                    "retryable": row["message_id"] in kept,
                    "retry": retry if retry["attempt"] else None,
                }
            )
        return {"rows": rows, "next": rows[-1]["position"] if len(rows) == limit else None}


def _kept_messages(deps: Deps) -> set[str]:
    """Dead letters whose message was kept (by the event, or by the outbox for a follow-up): those can be
    retried."""
    with deps.store.reading() as conn:
        dead = [
            e.decode_as(MessageDeadLettered)
            for e in read_where(conn, t.events.c.type == MessageDeadLettered.TYPE)
        ]
        ids = {letter.message_id for letter in dead}
        queued = conn.execute(select(t.outbox.c.message_id).where(t.outbox.c.message_id.in_(ids))).scalars()
        return {letter.message_id for letter in dead if letter.message} | {str(m) for m in queued}

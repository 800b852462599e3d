"""``/api/ledger/<table>``: one typed route per ledger table, paged by log position, with equality filters.

Paging: rows order by log position; ``after`` (and ``before``) bound it and ``next`` is the cursor of the
next page, None on the last one. Any other query parameter names a column to match, its value read as
the column's type (a JSON column cannot be matched).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import FastAPI, HTTPException, Query, Request
from pydantic import BaseModel, create_model
from sqlalchemy import Column, Table, select

from ouroboros_gates.events.projections import actions, decisions, faults, labels, loop, proposals, runs
from ouroboros_gates.ops.api._common import MAX_POSITION, After, Deps, Limit, page
from ouroboros_gates.ops.api.models import row_model

__all__ = ["LEDGER", "ledger_routes"]

LEDGER: dict[str, Table] = {
    "backtest_replays": actions.backtest_replays,
    "closed_tickets": loop.closed_tickets,
    "dead_letter_retries": actions.dead_letter_retries,
    "decisions": decisions.decisions,
    "dismissals": actions.dismissals,
    "faults": faults.faults,
    "fixer_sessions": loop.fixer_sessions,
    "label_requests": labels.label_requests,
    "label_reviews": actions.label_reviews,
    "labeler_runs": labels.labeler_runs,
    "labels": labels.labels,
    "merges": loop.merges,
    "precheck_verdicts": proposals.verdicts,
    "proposals": proposals.proposals,
    "runs": runs.runs,
    "series_points": loop.series_points,
}
_PAGING = {"after", "before", "limit", "order"}
_INT64 = 2**63


def _value(column: Column[Any], raw: str) -> Any:
    try:
        kind = column.type.python_type
    except NotImplementedError:
        kind = object
    if kind not in (str, int, float, bool):
        raise HTTPException(400, f"{column.name}: a {kind.__name__} column cannot be filtered")
    if kind is bool:
        return raw.lower() in ("1", "true", "yes")
    try:
        value = kind(raw)
    except ValueError:
        raise HTTPException(400, f"{column.name}: {raw!r} is not a {kind.__name__}") from None
    if kind is int and not -_INT64 <= value < _INT64:
        raise HTTPException(400, f"{column.name}: {raw} is out of range (a 64-bit integer)")
    return value


def _filters(table: Table, params: dict[str, str]) -> list[Any]:
    """Equality filters from the query string, each value read as its column's type."""
    where = []
    for name, raw in params.items():
        column: Column[Any] | None = table.c.get(name)
        if column is None:
            raise HTTPException(400, f"unknown filter {name!r}; columns: {', '.join(table.c.keys())}")
        where.append(column == _value(column, raw))
    return where


def _page_model(name: str, table: Table) -> type[BaseModel]:
    row = row_model(table)
    title = "Ledger" + "".join(part.title() for part in name.split("_")) + "Page"
    fields: dict[str, Any] = {
        "table": (Literal[name], ...),
        "rows": (list[row], ...),  # type: ignore[valid-type]
        "next": (int | None, ...),
    }
    return create_model(title, __doc__=f"A page of {table.name}.", **fields)


def _route(api: FastAPI, deps: Deps, name: str, table: Table) -> None:
    @api.get(
        f"/api/ledger/{name}", response_model=_page_model(name, table), tags=["ledger"], name=f"ledger_{name}"
    )
    def read(
        request: Request,
        after: After = 0,
        before: Annotated[
            int | None, Query(ge=1, le=MAX_POSITION, description="Only rows before it.")
        ] = None,
        limit: Limit = 100,
        order: Literal["asc", "desc"] = "asc",
    ) -> dict[str, Any]:
        params = {k: v for k, v in request.query_params.items() if k not in _PAGING}
        position = table.c.position
        query = select(table).where(position > after, *_filters(table, params))
        if before is not None:
            query = query.where(position < before)
        query = query.order_by(position.desc() if order == "desc" else position).limit(limit)
        return {"table": name, **page(deps.rows(query), limit)}

    read.__doc__ = f"Rows of {table.name} by log position; any other parameter matches a column."


def ledger_routes(api: FastAPI, deps: Deps) -> None:
    """A typed route per table, then a 404 naming the tables for any other name."""
    for name, table in LEDGER.items():
        _route(api, deps, name, table)

    @api.get("/api/ledger/{table}", include_in_schema=False)
    def unknown(table: str) -> None:
        raise HTTPException(404, f"unknown ledger table {table!r}; known: {', '.join(sorted(LEDGER))}")

"""Findings with their proofs: filtered, sorted and paged in the database; and the generic export.

Tenancy: the server shows the tenant ``OURO_TENANT`` names. A finding of another tenant appears only when
its scope is generic, and then without its source lines, with its spans cut to the file name, and with its
texts passed through the operator-identifier gate (``ops.redact``).
"""

from __future__ import annotations

from enum import StrEnum
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
from fastapi import FastAPI, HTTPException, Query
from sqlalchemy import ColumnElement, and_, func, or_, select

from ouroboros_gates.events.projections.findings import findings as table
from ouroboros_gates.ops.api._common import After, Deps, Limit, Offset
from ouroboros_gates.ops.api.models import ExportPage, FindingsPage
from ouroboros_gates.ops.export import export_findings, gate_for, gate_row, read_export_key
from ouroboros_gates.schemas.errors import OuroError
from ouroboros_gates.schemas.settings import Settings

__all__ = ["FindingSort", "findings_routes"]

_SOURCE_CHARS = 400
_FACETS = ("miner", "rule", "scope", "severity")
Text = Annotated[str | None, Query(max_length=200)]


class FindingSort(StrEnum):
    """What findings can be sorted by."""

    POSITION = "position"
    MINER = "miner"
    RULE = "rule"
    RUN = "run"
    SEVERITY = "severity"
    SCOPE = "scope"
    TENANT = "tenant"


@lru_cache(maxsize=1024)
def _line_of(path: Path, line: int, mtime_ns: int) -> str | None:
    with path.open("rb") as handle:
        found = next(islice(handle, line - 1, line), None)
    return None if found is None else found.decode("utf-8", "replace").rstrip("\r\n")[:_SOURCE_CHARS]


def _source(file: str, line: int, settings: Settings) -> str | None:
    """The text of ``file:line`` when the file lies under the state dir or ``OURO_ROOTS``, else None."""
    path = Path(file).expanduser()
    path = (path if path.is_absolute() else settings.state_dir / path).resolve()
    if not any(path.is_relative_to(root) for root in settings.allowed_roots) or not path.is_file():
        return None
    try:
        return _line_of(path, line, path.stat().st_mtime_ns)
    except OSError:
        return None


def _fact_text(fact: dict[str, Any]) -> str:
    args = [
        orjson.dumps(arg["text"]).decode() if "text" in arg else f"{arg['number']:g}"
        for arg in fact.get("args", [])
    ]
    return f"{fact['predicate']}({', '.join(args)})"


def _proof(proof: list[dict[str, Any]], own: bool, settings: Settings) -> list[dict[str, Any]]:
    shown: list[dict[str, Any]] = []
    for fact in proof:
        span = fact.get("span")
        item: dict[str, Any] = {**fact, "text": _fact_text(fact), "where": None, "source": None}
        if span:
            file = span["file"] if own else Path(span["file"]).name
            item["span"] = {"file": file, "line": span["line"]}
            item["where"] = f"{file}:{span['line']}"
            item["source"] = _source(file, span["line"], settings) if own else None
        shown.append(item)
    return shown


def _where(
    visible: ColumnElement[bool], filters: dict[str, str | None], text: str | None
) -> ColumnElement[bool]:
    clauses = [visible, *(table.c[name] == value for name, value in filters.items() if value is not None)]
    if text:
        clauses.append(
            or_(table.c.run.contains(text, autoescape=True), table.c.subject.contains(text, autoescape=True))
        )
    return and_(*clauses)


def _facets(deps: Deps, visible: ColumnElement[bool]) -> dict[str, list[str]]:
    with deps.store.reading() as conn:
        return {
            name: [
                str(v)
                for v in conn.execute(
                    select(table.c[name]).where(visible).distinct().order_by(table.c[name])
                ).scalars()
            ]
            for name in _FACETS
        }


def findings_routes(api: FastAPI, deps: Deps) -> None:
    """``/api/findings`` and ``/api/export/findings``."""
    settings = deps.settings
    visible = or_(table.c.tenant == settings.tenant, table.c.scope == "generic")

    @api.get("/api/findings", response_model=FindingsPage, tags=["loop"])
    def findings_(
        after: After = 0,
        limit: Limit = 100,
        offset: Offset = 0,
        sort: FindingSort = FindingSort.POSITION,
        order: Literal["asc", "desc"] = "asc",
        miner: Text = None,
        rule: Text = None,
        scope: Literal["generic", "tenant"] | None = None,
        severity: Text = None,
        run: Text = None,
        q: Text = None,
        tenant: Annotated[
            str | None, Query(max_length=64, description="Only this tenant's (as visible here).")
        ] = None,
    ) -> dict[str, Any]:
        """Findings with their proofs, filtered (exact fields; ``q`` in the run or subject), sorted and
        paged."""
        filters = {
            "miner": miner,
            "rule": rule,
            "scope": scope,
            "severity": severity,
            "run": run,
            "tenant": tenant,
        }
        where = and_(_where(visible, filters, q), table.c.position > after)
        column = table.c[sort.value]
        keys = [column.desc() if order == "desc" else column.asc(), table.c.position.asc()]
        found = deps.rows(select(table).where(where).order_by(*keys).offset(offset).limit(limit))
        total = int(deps.scalar(select(func.count()).select_from(table).where(where)))
        for row in found:
            own = row["tenant"] == settings.tenant
            row["subject"] = orjson.loads(row["subject"])
            if not own:  # another tenant's generic finding: its texts pass the operator-identifier gate
                gate_row(row, gate_for(settings, [row["tenant"]]))
            row["proof"] = _proof(row["proof"], own, settings)
        by_position = sort is FindingSort.POSITION and order == "asc" and offset == 0
        full = len(found) == limit
        return {
            "rows": found,
            "total": total,
            "offset": offset,
            "limit": limit,
            "next": found[-1]["position"] if full and by_position else None,
            "next_offset": offset + limit if offset + limit < total else None,
            "facets": _facets(deps, visible),
        }

    @api.get("/api/export/findings", response_model=ExportPage, tags=["loop"])
    def export(after: After = 0, limit: Limit = 100) -> dict[str, Any]:
        """Generic findings of every tenant, re-keyed and gated (503 until the export key exists)."""
        generic = select(table).where(table.c.scope == "generic", table.c.position > after)
        rows = deps.rows(generic.order_by(table.c.position).limit(limit))
        key = read_export_key(settings)
        if key is None:
            raise HTTPException(
                503, "no export key yet: the server makes it when it starts with a writable state"
            )
        try:
            shown = export_findings(rows, key, gate_for(settings, {r["tenant"] for r in rows}))
        except OuroError as exc:
            raise HTTPException(500, str(exc)) from None
        return {"findings": shown, "next": rows[-1]["position"] if len(rows) == limit else None}

"""The HTTP API (FastAPI) and the ops page: reads open, writes behind a token, no secret ever shown.

Reads: ``/api/health``, ``/api/status``, ``/api/events``, ``/api/ouroboros`` (the measurer's snapshot; a
state without one is measured once when the app is created),
``/api/findings`` (with proofs and source lines), ``/api/backtests``, ``/api/ledger/{table}``,
``/api/labeler``, ``/api/spend``, ``/metrics`` (Prometheus, see ``ops.metrics``), and the ops page at ``/``.
Writes (``/api/publish/{type}``, ``/api/replay``) need ``Authorization: Bearer $OURO_API_TOKEN`` and are
refused outright when no token is configured.

Tenancy: the server shows the tenant ``OURO_TENANT`` names. A finding (or acceptance) of another tenant
appears only when its scope is generic, and then without its source lines and with its spans cut to the
file name, and its texts pass the operator-identifier gate (``ops.redact``). ``/api/export/findings``
is the generic export: generic findings only, re-keyed and gated (``ops.export``). ``/api/events`` shows
the server tenant's events only.

Paging: ledger reads order by log position; ``after`` (and ``before``) bound it and ``next`` is the cursor
of the next page, None on the last one. While the app runs, a background thread keeps the ledger caught
up with the log every ``catch_up_every_s`` seconds.
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo

import orjson
from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry
from pydantic import ValidationError
from sqlalchemy import Column, Select, Table, or_, select

from ouroboros_gates.events import SqlEventStore, open_store
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.projections import PROJECTIONS, decisions, faults, findings, labels, loop, proposals, runs
from ouroboros_gates.events.projector import catch_up, digest, rebuild
from ouroboros_gates.ops.export import export_findings, export_key, gate_for, gate_row
from ouroboros_gates.ops.metrics import registry_for, render, spend_today
from ouroboros_gates.schemas import MESSAGE_TYPES, LabelerRun
from ouroboros_gates.schemas.errors import OuroError
from ouroboros_gates.schemas.settings import Settings

__all__ = ["LEDGER", "PAGE", "create_app"]

log = logging.getLogger(__name__)
PAGE = Path(__file__).parent / "page"
LEDGER: dict[str, Table] = {
    "closed_tickets": loop.closed_tickets,
    "decisions": decisions.decisions,
    "faults": faults.faults,
    "fixer_sessions": loop.fixer_sessions,
    "label_requests": labels.label_requests,
    "labeler_runs": labels.labeler_runs,
    "labels": labels.labels,
    "merges": loop.merges,
    "precheck_verdicts": proposals.verdicts,
    "proposals": proposals.proposals,
    "runs": runs.runs,
    "series_points": loop.series_points,
}
_PAGING = {"after", "before", "limit", "order"}
_CREDENTIALS = re.compile(r"(\w[\w+.-]*://)[^@/\s]+@")
_SOURCE_CHARS = 400
After = Annotated[int, Query(ge=0, description="Only rows past this log position.")]
Limit = Annotated[int, Query(ge=1, le=1000, description="Rows per page.")]


def _redact(text: str | None) -> str | None:
    """Credentials in URLs (``redis://user:secret@host``) are cut from anything the API shows."""
    return None if text is None else _CREDENTIALS.sub(r"\1***@", text)


def _iso(moment: datetime) -> str:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()  # SQLite: naive UTC


def _page(rows: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    return {"rows": rows, "next": rows[-1]["position"] if len(rows) == limit else None}


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
        orjson.dumps(arg["text"]).decode() if "text" in arg else f"{arg['number']:g}" for arg in fact.get("args", [])
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


def _keep_caught_up(store: SqlEventStore, every_s: float, stop: threading.Event) -> None:
    while True:
        try:
            catch_up(store, PROJECTIONS)
        except Exception:  # the loop outlives any one failure (database restarting, lock timeout); logged
            log.exception("ledger catch-up failed; retrying in %.1fs", every_s)
        if stop.wait(every_s):
            return


def _lifespan(store: SqlEventStore, every_s: float | None) -> Callable[[FastAPI], Any]:
    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        stop = threading.Event()
        worker = threading.Thread(target=_keep_caught_up, args=(store, every_s, stop), daemon=True)
        if every_s:
            worker.start()
        try:
            yield
        finally:
            stop.set()
            if worker.is_alive():
                worker.join(timeout=30)

    return lifespan


def _filters(table: Table, params: dict[str, str]) -> list[Any]:
    """Equality filters from the query string, each value read as its column's type."""
    where = []
    for name, raw in params.items():
        column: Column[Any] | None = table.c.get(name)
        if column is None:
            raise HTTPException(400, f"unknown filter {name!r}; columns: {', '.join(table.c.keys())}")
        try:
            kind = column.type.python_type
        except NotImplementedError:
            kind = object
        if kind not in (str, int, float, bool):
            raise HTTPException(400, f"{name}: a {kind.__name__} column cannot be filtered")
        if kind is bool:
            value: Any = raw.lower() in ("1", "true", "yes")
        else:
            try:
                value = kind(raw)
            except ValueError:
                raise HTTPException(400, f"{name}: {raw!r} is not a {kind.__name__}") from None
        where.append(column == value)
    return where


@dataclass(frozen=True)
class _Deps:
    """What the routes share: the settings, the event store and the measuring tools built once."""

    settings: Settings
    store: SqlEventStore
    zone: ZoneInfo
    cap_usd: float
    registry: CollectorRegistry

    def rows(self, query: Select[Any]) -> list[dict[str, Any]]:
        with self.store.reading() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]


def create_app(settings: Settings, catch_up_every_s: float | None = 2.0) -> FastAPI:
    """The API on the settings' event log (and broker, for queue depths)."""
    from ouroboros_gates.workers import build_app

    store = open_store(settings.event_log_url)
    zone, cap = ZoneInfo(settings.timezone), settings.fixer_daily_cap_usd
    _measure_once(settings, store, zone)
    deps = _Deps(settings, store, zone, cap, registry_for(store, build_app(settings, include=False), zone, cap))
    api = FastAPI(title="Ouroboros", version="0.1.0", lifespan=_lifespan(store, catch_up_every_s))
    _fleet_routes(api, deps)
    _loop_routes(api, deps)
    _ledger_routes(api, deps)
    _write_routes(api, deps)
    api.mount("/page", StaticFiles(directory=PAGE), name="page")
    return api


def _measure_once(settings: Settings, store: SqlEventStore, zone: ZoneInfo) -> None:
    """A state with no snapshot yet (a fresh install): measure the log as it stands, once, so that
    ``/api/ouroboros`` answers from the start (the measure trigger keeps it current from then on)."""
    from ouroboros_gates.events import utcnow
    from ouroboros_gates.workers.measurer import measure_log, snapshot_path, write_snapshot

    path = snapshot_path(settings)
    if path.is_file():
        return
    try:
        write_snapshot(path, measure_log(store, utcnow(), zone)[1])
    except (OuroError, OSError):  # the API serves without it; /api/ouroboros says there is none yet
        log.exception("measuring at start failed")


def _fleet_routes(api: FastAPI, deps: _Deps) -> None:
    store, settings = deps.store, deps.settings

    @api.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(PAGE / "index.html")

    @api.get("/api/health")
    def health() -> dict[str, Any]:
        return {"ok": True, "head": store.head()}

    @api.get("/api/status")
    def status() -> dict[str, Any]:
        from ouroboros_gates.ops.status import fleet_status

        snapshot = asdict(fleet_status(store))
        snapshot["broker_error"] = _redact(snapshot["broker_error"])
        return snapshot

    @api.get("/api/events")
    def events(after: After = 0, limit: Limit = 100) -> Any:
        mine = t.events.c.meta["tenant"].as_string() == settings.tenant
        query = select(t.events).where(t.events.c.position > after, mine).order_by(t.events.c.position).limit(limit)
        return [
            {"position": e["position"], "stream": e["stream"], "version": e["version"], "type": e["type"],
             "payload": e["payload"], "recorded_at": _iso(e["recorded_at"])}
            for e in deps.rows(query)
        ]  # fmt: skip

    @api.get("/metrics", response_class=Response)
    def metrics() -> Response:
        return Response(render(deps.registry), media_type=CONTENT_TYPE_LATEST)


def _loop_routes(api: FastAPI, deps: _Deps) -> None:
    settings = deps.settings
    table = findings.findings
    visible = or_(table.c.tenant == settings.tenant, table.c.scope == "generic")

    @api.get("/api/ouroboros")
    def ouroboros() -> Response:
        from ouroboros_gates.workers.measurer import snapshot_path

        path = snapshot_path(settings)
        if not path.is_file():
            raise HTTPException(404, f"no snapshot yet: {path.name} is written by the measurer (ouro measure)")
        return Response(path.read_bytes(), media_type="application/json")

    @api.get("/api/findings")
    def findings_(
        after: After = 0,
        limit: Limit = 100,
        tenant: Annotated[str | None, Query(description="Only this tenant's findings (still as visible here).")] = None,
    ) -> dict[str, Any]:
        query = select(table).where(visible, table.c.position > after).order_by(table.c.position).limit(limit)
        if tenant is not None:
            query = query.where(table.c.tenant == tenant)
        found = deps.rows(query)
        for row in found:
            own = row["tenant"] == settings.tenant
            row["subject"] = orjson.loads(row["subject"])
            if not own:  # another tenant's generic finding: its texts pass the operator-identifier gate
                gate_row(row, gate_for(settings, [row["tenant"]]))
            row["proof"] = _proof(row["proof"], own, settings)
        return _page(found, limit)

    @api.get("/api/export/findings")
    def export(after: After = 0, limit: Limit = 100) -> dict[str, Any]:
        generic = select(table).where(table.c.scope == "generic", table.c.position > after)
        rows = deps.rows(generic.order_by(table.c.position).limit(limit))
        try:
            shown = export_findings(rows, export_key(settings), gate_for(settings, {r["tenant"] for r in rows}))
        except OuroError as exc:
            raise HTTPException(500, str(exc)) from None
        return {"findings": shown, "next": rows[-1]["position"] if len(rows) == limit else None}

    @api.get("/api/backtests")
    def backtests(after: After = 0, limit: Limit = 100) -> dict[str, Any]:
        ev = t.events.c
        query = select(ev.position, ev.payload, ev.meta, ev.recorded_at).where(
            ev.type == "MinerAccepted", ev.position > after
        )
        shown = []
        for row in deps.rows(query.order_by(ev.position)):
            acceptance = row["payload"]["acceptance"]
            if row["meta"].get("tenant") == settings.tenant or acceptance["scope"] == "generic":
                shown.append({"position": row["position"], "recorded_at": _iso(row["recorded_at"]), **acceptance})
        return _page(shown[:limit], limit)

    @api.get("/api/labeler")
    def labeler() -> dict[str, Any]:
        record = settings.state_dir / "labeler.json"
        if record.is_file():
            try:
                run = LabelerRun.model_validate_json(record.read_bytes())
                return {"source": "labeler.json", "run": run.to_json_dict()}
            except (OSError, ValidationError) as exc:
                log.warning("%s unreadable (%s); showing the ledger's latest run", record, exc)
        runs_ = labels.labeler_runs
        latest = deps.rows(select(runs_).order_by(runs_.c.position.desc()).limit(1))
        if not latest:
            raise HTTPException(404, "no labeler run yet (neither labeler.json nor a LabelerRunCompleted)")
        return {"source": "ledger", "run": latest[0]["record"]}

    @api.get("/api/spend")
    def spend() -> dict[str, Any]:
        today = spend_today(deps.store, deps.zone, deps.cap_usd)
        return {**asdict(today), "fixers_on": today.fixers_on, "remaining_usd": today.remaining_usd}


def _ledger_routes(api: FastAPI, deps: _Deps) -> None:
    @api.get("/api/ledger/{table}")
    def ledger(
        table: str,
        request: Request,
        after: After = 0,
        before: Annotated[int | None, Query(ge=1, description="Only rows before this position.")] = None,
        limit: Limit = 100,
        order: Literal["asc", "desc"] = "asc",
    ) -> dict[str, Any]:
        chosen = LEDGER.get(table)
        if chosen is None:
            raise HTTPException(404, f"unknown ledger table {table!r}; known: {', '.join(sorted(LEDGER))}")
        params = {k: v for k, v in request.query_params.items() if k not in _PAGING}
        position = chosen.c.position
        query = select(chosen).where(position > after, *_filters(chosen, params))
        if before is not None:
            query = query.where(position < before)
        query = query.order_by(position.desc() if order == "desc" else position).limit(limit)
        return {"table": table, **_page(deps.rows(query), limit)}


def _write_routes(api: FastAPI, deps: _Deps) -> None:
    settings, store = deps.settings, deps.store

    def require_token(authorization: Annotated[str | None, Header()] = None) -> None:
        expected = settings.api_token
        scheme, _, given = (authorization or "").strip().partition(" ")
        if not expected or scheme.lower() != "bearer" or not secrets.compare_digest(given.strip(), expected):
            raise HTTPException(
                status_code=401,
                detail="a bearer token (OURO_API_TOKEN) is required to write",
                headers={"WWW-Authenticate": "Bearer"},
            )

    @api.post("/api/publish/{type_name}", dependencies=[Depends(require_token)])
    def publish(type_name: str, body: dict[str, Any]) -> dict[str, str]:
        from ouroboros_gates.workers import publish as send

        cls = MESSAGE_TYPES.get(type_name)
        if cls is None:
            raise HTTPException(status_code=404, detail=f"unknown message type {type_name!r}")
        try:
            message = cls.model_validate(body)
        except ValidationError as exc:
            raise HTTPException(422, exc.errors(include_url=False, include_context=False)) from None
        send(message)
        return {"message_id": message.message_id, "task": message.TASK}

    @api.post("/api/replay", dependencies=[Depends(require_token)])
    def replay(rebuild_all: Annotated[bool, Query(alias="rebuild")] = False) -> dict[str, Any]:
        applied = rebuild(store, PROJECTIONS) if rebuild_all else catch_up(store, PROJECTIONS)
        return {"rebuilt": rebuild_all, "applied": applied, "digest": digest(store, PROJECTIONS)}

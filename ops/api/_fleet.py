"""The fleet's routes: the page, health, ``ouro status``'s figures, the workers at work, the log, the metrics
and the API's own documentation (Swagger UI served from the installed ``fastapi_offline`` package)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy import select

from ouroboros_gates.events import tables as t
from ouroboros_gates.ops.api._common import After, Deps, Limit, iso, redact
from ouroboros_gates.ops.api.models import EventRow, FleetStatus, Health, Workers
from ouroboros_gates.ops.metrics import render

__all__ = ["PAGE", "SWAGGER", "fleet_routes"]

PAGE = Path(__file__).resolve().parents[1] / "page"
SWAGGER = Path(fastapi_offline.__file__).parent / "static"
"""Swagger UI's files (``swagger-ui-bundle.js``, ``swagger-ui.css``) as the installed package ships them."""


def fleet_routes(api: FastAPI, deps: Deps) -> None:
    """The page, health, status, workers, events, metrics and docs."""
    _page_and_docs(api)
    store, settings = deps.store, deps.settings

    @api.get("/api/health", response_model=Health, tags=["fleet"])
    def health() -> dict[str, Any]:
        """The server answers; the log's head and the loop's zone."""
        return {"ok": True, "head": store.head(), "timezone": settings.timezone}

    @api.get("/api/status", response_model=FleetStatus, tags=["fleet"])
    def status() -> dict[str, Any]:
        """What ``ouro status`` shows: queue depths, dead letters, rejections, outbox, projection lag."""
        from ouroboros_gates.ops.status import fleet_status

        snapshot = asdict(fleet_status(store, deps.broker))
        snapshot["broker_error"] = redact(snapshot["broker_error"])
        snapshot["database_error"] = redact(snapshot["database_error"])
        return snapshot

    @api.get("/api/workers", response_model=Workers, tags=["fleet"])
    def workers() -> dict[str, Any]:
        """The workers answering the broker's ping, and the tasks they run now."""
        from ouroboros_gates.ops.status import workers_at_work

        found = asdict(workers_at_work(deps.broker))
        found["reason"] = redact(found["reason"])
        return found

    @api.get("/api/events", response_model=list[EventRow], tags=["fleet"])
    def events(after: After = 0, limit: Limit = 100) -> list[dict[str, Any]]:
        """This tenant's events past ``after``, in log order."""
        mine = t.events.c.meta["tenant"].as_string() == settings.tenant
        query = (
            select(t.events)
            .where(t.events.c.position > after, mine)
            .order_by(t.events.c.position)
            .limit(limit)
        )
        keys = ("position", "stream", "version", "type", "payload")
        return [{**{k: e[k] for k in keys}, "recorded_at": iso(e["recorded_at"])} for e in deps.rows(query)]

    @api.get(
        "/metrics",
        response_class=Response,
        tags=["fleet"],
        responses={200: {"content": {CONTENT_TYPE_LATEST: {}}, "description": "Prometheus text exposition."}},
    )
    def metrics() -> Response:
        """Prometheus metrics, read from the broker, the event log and the measurer's snapshot at each
        scrape."""
        return Response(render(deps.registry), media_type=CONTENT_TYPE_LATEST)


def _page_and_docs(api: FastAPI) -> None:
    api.mount("/page", StaticFiles(directory=PAGE), name="page")
    api.mount("/docs/static", StaticFiles(directory=SWAGGER), name="swagger")

    @api.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(PAGE / "index.html")

    @api.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="Ouroboros API",
            swagger_js_url="/docs/static/swagger-ui-bundle.js",
            swagger_css_url="/docs/static/swagger-ui.css",
            swagger_favicon_url="/docs/static/favicon.png",
            swagger_ui_parameters={"validatorUrl": None, "persistAuthorization": False},
        )

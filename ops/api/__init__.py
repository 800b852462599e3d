"""The HTTP API (FastAPI) and the ops page: reads open, writes behind a token, no secret ever shown.

Reads (``docs/operations.md`` lists them with their parameters): the fleet (``/api/health``, ``/api/status``,
``/api/workers``, ``/api/events``, ``/api/dead_letters``, ``/metrics``), the loop (``/api/ouroboros``, the
measurer's snapshot, measured once when the app is created on a state without one; ``/api/findings`` with
proofs, filtered, sorted and paged; ``/api/export/findings``; ``/api/backtests``; ``/api/labels``;
``/api/labeler``; ``/api/spend``), the decider (``/api/decisions``) and every ledger table
(``/api/ledger/<table>``); the ops page at ``/`` and the API's own documentation at ``/docs``, offline.

Writes (``/api/publish/<type>``, ``/api/replay`` and the operator's actions under ``/api/actions``) need
``Authorization: Bearer $OURO_API_TOKEN`` and are refused (403) when no token is configured. Every request
passes ``ops.api._http`` first (trusted hosts, body size and deadline, 400 for a parameter out of range);
``ops.api.serve`` gives uvicorn a protocol that times out request heads.

While the app runs, a background thread keeps the ledger caught up with the log every ``catch_up_every_s``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any
from zoneinfo import ZoneInfo

from fastapi import FastAPI

from ouroboros_gates.events import LedgerStore, open_store
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import catch_up
from ouroboros_gates.ops.api._actions import action_routes
from ouroboros_gates.ops.api._common import Deps, redact
from ouroboros_gates.ops.api._findings import findings_routes
from ouroboros_gates.ops.api._fleet import PAGE, fleet_routes
from ouroboros_gates.ops.api._http import BODY_TIMEOUT_S, MAX_BODY_BYTES, guard
from ouroboros_gates.ops.api._ledger import LEDGER, ledger_routes
from ouroboros_gates.ops.api._loop import loop_routes
from ouroboros_gates.ops.export import export_key
from ouroboros_gates.ops.metrics import registry_for
from ouroboros_gates.schemas.errors import OuroError
from ouroboros_gates.schemas.settings import Settings

__all__ = ["LEDGER", "PAGE", "create_app", "redact"]

log = logging.getLogger(__name__)

_BEARER = {"bearer": {"type": "http", "scheme": "bearer", "description": "OURO_API_TOKEN"}}


def _keep_caught_up(store: LedgerStore, every_s: float, stop: threading.Event) -> None:
    while True:
        try:
            catch_up(store, PROJECTIONS)
        except Exception:  # the loop outlives any one failure (database restarting, lock timeout); logged
            log.exception("ledger catch-up failed; retrying in %.1fs", every_s)
        if stop.wait(every_s):
            return


def _lifespan(store: LedgerStore, every_s: float | None) -> Callable[[FastAPI], Any]:
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


def create_app(
    settings: Settings, catch_up_every_s: float | None = 2.0, body_timeout_s: float = BODY_TIMEOUT_S
) -> FastAPI:
    """The API on the settings' event log (and broker, for queue depths, workers and publishing)."""
    from ouroboros_gates.workers import build_app

    store = open_store(settings.event_log_url)
    zone, cap = ZoneInfo(settings.timezone), settings.fixer_daily_cap_usd
    _prepare_state(settings, store, zone)
    broker = build_app(settings, include=False)
    deps = Deps(
        settings, store, broker, zone, cap, registry_for(store, broker, zone, cap, settings.state_dir)
    )
    api = FastAPI(
        title="Ouroboros",
        version="0.1.0",
        lifespan=_lifespan(store, catch_up_every_s),
        max_body_size=MAX_BODY_BYTES,
        docs_url=None,
        redoc_url=None,
    )
    guard(api, settings, body_timeout_s)
    fleet_routes(api, deps)
    findings_routes(api, deps)
    loop_routes(api, deps)
    ledger_routes(api, deps)
    action_routes(api, deps)
    _secure_openapi(api)
    return api


def _prepare_state(settings: Settings, store: LedgerStore, zone: ZoneInfo) -> None:
    """What the reads need written before they run, so that a read never writes: the export key, and for a
    state with no snapshot yet (a fresh install) one measurement of the log as it stands (the measure
    trigger keeps it current from then on)."""
    from ouroboros_gates.events import utcnow
    from ouroboros_gates.workers.measurer import measure_log, snapshot_path, write_snapshot

    try:
        export_key(settings)
    except OSError:  # a read-only state: the export answers 503 until the key exists
        log.exception("making the export key failed")
    path = snapshot_path(settings)
    if path.is_file():
        return
    try:
        write_snapshot(path, measure_log(store, utcnow(), zone)[1])
    except (OuroError, OSError):  # the API serves without it; /api/ouroboros says there is none yet
        log.exception("measuring at start failed")


def _secure_openapi(api: FastAPI) -> None:
    """Name the bearer scheme in OpenAPI and put it on every route that writes; a parameter that does not fit
    is a 400 (``ops.api._http``), documented so in place of FastAPI's 422 (which only a published message's
    own fields still answer)."""
    build = api.openapi

    def openapi() -> dict[str, Any]:
        if api.openapi_schema is None:
            schema = build()
            schema.setdefault("components", {})["securitySchemes"] = _BEARER
            for path, item in schema["paths"].items():
                for method, operation in item.items():
                    _document(path, method, operation)
            api.openapi_schema = schema
        return api.openapi_schema

    api.openapi = openapi  # type: ignore[method-assign]


def _document(path: str, method: str, operation: dict[str, Any]) -> None:
    responses = operation["responses"]
    invalid = responses.pop("422", None)
    if invalid is not None:
        problem = {"application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
        responses.setdefault(
            "400", {"description": "A parameter is malformed or out of range.", "content": problem}
        )
        if path.startswith("/api/publish/"):
            responses["422"] = {
                "description": "The message's fields are invalid (each named).",
                "content": problem,
            }
    if method in ("post", "put", "patch", "delete"):
        operation["security"] = [{"bearer": []}]

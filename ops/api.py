"""The HTTP API (FastAPI): the fleet's status and the event log, reads open, writes behind a token."""

from __future__ import annotations

import secrets
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, HTTPException, Query

from events import Settings, SqlEventStore, ensure_schema
from schemas import MESSAGE_TYPES

__all__ = ["create_app"]


def create_app(settings: Settings) -> FastAPI:
    """The API on the settings' event log."""
    store = SqlEventStore.from_url(settings.event_log_url)
    ensure_schema(store.engine)
    api = FastAPI(title="Ouroboros", version="0.1.0")

    def require_token(authorization: Annotated[str | None, Header()] = None) -> None:
        expected = settings.api_token
        given = (authorization or "").removeprefix("Bearer ").strip()
        if not expected or not secrets.compare_digest(given, expected):
            raise HTTPException(status_code=401, detail="a bearer token (OURO_API_TOKEN) is required to write")

    @api.get("/api/health")
    def health() -> dict[str, Any]:
        return {"ok": True, "head": store.head()}

    @api.get("/api/status")
    def status() -> dict[str, Any]:
        from dataclasses import asdict

        from ops.status import fleet_status

        return asdict(fleet_status(store))

    @api.get("/api/events")
    def events(after: Annotated[int, Query(ge=0)] = 0, limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> Any:
        return [
            {"position": e.position, "stream": e.stream, "version": e.version, "type": e.type,
             "payload": e.payload, "recorded_at": e.recorded_at.isoformat()}
            for e in store.read(after=after, limit=limit)
        ]  # fmt: skip

    @api.post("/api/publish/{type_name}", dependencies=[Depends(require_token)])
    def publish(type_name: str, body: dict[str, Any]) -> dict[str, str]:
        from workers import publish as send

        cls = MESSAGE_TYPES.get(type_name)
        if cls is None:
            raise HTTPException(status_code=404, detail=f"unknown message type {type_name!r}")
        message = cls.model_validate(body)
        send(message)
        return {"message_id": message.message_id, "task": message.TASK}

    return api

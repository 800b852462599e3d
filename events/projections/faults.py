"""ouro_faults: every rejected and dead-lettered message, so nothing is dropped out of sight."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Column, String, Table

from ouroboros_gates.events.projections.base import RowProjection
from ouroboros_gates.events.store import StoredEvent
from ouroboros_gates.events.tables import metadata

faults = Table(
    "ouro_faults",
    metadata,
    Column("position", BigInteger, primary_key=True, autoincrement=False),
    Column("kind", String(20), nullable=False),
    Column("task", String(100), nullable=False),
    Column("message_id", String(128), nullable=True),
    Column("detail", JSON, nullable=False),
)


def _rejected(event: StoredEvent) -> dict[str, Any]:
    p = event.payload
    return {
        "position": event.position,
        "kind": "rejected",
        "task": p["task"],
        "message_id": p.get("message_id"),
        "detail": p["errors"],
    }


def _dead(event: StoredEvent) -> dict[str, Any]:
    p = event.payload
    return {
        "position": event.position,
        "kind": "dead_letter",
        "task": p["task"],
        "message_id": p["message_id"],
        "detail": {"attempts": p["attempts"], "error_type": p["error_type"], "error": p["error"]},
    }


projection = RowProjection("faults", faults, {"MessageRejected": _rejected, "MessageDeadLettered": _dead})

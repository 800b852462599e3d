"""ouro_decisions: the decider's answer per candidate and pin."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Column, Float, String, Table, Text

from ouroboros_gates.events.projections.base import RowProjection
from ouroboros_gates.events.store import StoredEvent
from ouroboros_gates.events.tables import metadata

decisions = Table(
    "ouro_decisions",
    metadata,
    Column("repo", String(200), primary_key=True),
    Column("pin", String(64), primary_key=True),
    Column("path", String(1000), primary_key=True),
    Column("function", String(300), primary_key=True),
    Column("family", String(100), primary_key=True),
    Column("action", String(20), nullable=False),
    Column("p", Float, nullable=True),
    Column("rationale", Text, nullable=False),
    Column("program_id", String(64), nullable=False),
    Column("model", String(200), nullable=True),
    Column("cost_usd", Float, nullable=False),
    Column("cached", Boolean, nullable=False),
    Column("undecided", String(40), nullable=True),
    Column("position", BigInteger, nullable=False),
    Column("flows", JSON, nullable=True),  # None: decided before the event carried its flows
)


def _row(event: StoredEvent) -> dict[str, Any]:
    d = event.payload["decision"]
    c = d["candidate"]
    return {
        **{key: c[key] for key in ("repo", "pin", "path", "function", "family")},
        "action": d["action"],
        "p": d.get("p"),
        "rationale": d.get("rationale", ""),
        "program_id": d["program_id"],
        "model": d.get("model"),
        "cost_usd": d.get("cost_usd", 0.0),
        "cached": d.get("cached", False),
        "undecided": d.get("undecided"),
        "position": event.position,
        "flows": event.payload.get("flows", []),
    }


projection = RowProjection("decisions", decisions, {"DecisionMade": _row})

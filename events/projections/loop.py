"""ouro_fixer_sessions, ouro_merges, ouro_closed_tickets and ouro_series_points."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import JSON, BigInteger, Column, Float, Integer, String, Table, Text

from ouroboros_gates.events.projections.base import RowProjection
from ouroboros_gates.events.store import StoredEvent
from ouroboros_gates.events.tables import metadata

fixer_sessions = Table(
    "ouro_fixer_sessions",
    metadata,
    Column("ticket", Integer, primary_key=True),
    Column("started", String(40), primary_key=True),
    Column("ended", String(40), nullable=False),
    Column("branch", String(300), nullable=False),
    Column("cost_usd", Float, nullable=False),
    Column("outcome", String(30), nullable=False),
    Column("pull_request", Integer, nullable=True),
    Column("position", BigInteger, nullable=False),
)

merges = Table(
    "ouro_merges",
    metadata,
    Column("pull_request", Integer, primary_key=True),
    Column("head_sha", String(64), primary_key=True),
    Column("outcome", String(20), nullable=False),
    Column("refusal", JSON, nullable=False),
    Column("at", String(40), nullable=False),
    Column("position", BigInteger, nullable=False),
)

closed_tickets = Table(
    "ouro_closed_tickets",
    metadata,
    Column("ticket", Integer, primary_key=True),
    Column("pull_request", Integer, nullable=False),
    Column("reason", Text, nullable=False),
    Column("position", BigInteger, nullable=False),
)

series_points = Table(
    "ouro_series_points",
    metadata,
    Column("series", String(200), primary_key=True),
    Column("at", String(40), primary_key=True),
    Column("labels", String(500), primary_key=True),
    Column("value", Float, nullable=True),
    Column("reason", Text, nullable=True),
    Column("low", Float, nullable=True),
    Column("high", Float, nullable=True),
    Column("position", BigInteger, nullable=False),
)


def _session(event: StoredEvent) -> dict[str, Any]:
    s = event.payload["session"]
    return {
        "ticket": s["ticket"],
        "started": s["started"],
        "ended": s["ended"],
        "branch": s["branch"],
        "cost_usd": s["cost_usd"],
        "outcome": s["outcome"],
        "pull_request": s.get("pull_request"),
        "position": event.position,
    }


def _attempt(event: StoredEvent) -> dict[str, Any]:
    p = event.payload
    row = {"outcome": "attempted", "refusal": [], "at": p["at"]}
    return {"pull_request": p["pull_request"], "head_sha": p["head_sha"], **row, "position": event.position}


def _result(event: StoredEvent) -> dict[str, Any]:
    r = event.payload["result"]
    return {
        "pull_request": r["pull_request"],
        "head_sha": r["head_sha"],
        "outcome": r["outcome"],
        "refusal": r["refusal"],
        "at": r["at"],
        "position": event.position,
    }


def _closed(event: StoredEvent) -> dict[str, Any]:
    p = event.payload
    return {
        "ticket": p["ticket"],
        "pull_request": p["pull_request"],
        "reason": p["reason"],
        "position": event.position,
    }


def _point(event: StoredEvent) -> dict[str, Any]:
    p = event.payload["point"]
    return {
        "series": p["series"],
        "at": p["at"],
        "labels": orjson.dumps(p.get("labels") or {}, option=orjson.OPT_SORT_KEYS).decode(),
        "value": p.get("value"),
        "reason": p.get("reason"),
        "low": p.get("low"),
        "high": p.get("high"),
        "position": event.position,
    }


fixer_sessions_projection = RowProjection("fixer_sessions", fixer_sessions, {"FixerSessionEnded": _session})
merges_projection = RowProjection(
    "merges", merges, {"MergeAttempted": _attempt, "Merged": _result, "MergeRefused": _result}
)
closed_projection = RowProjection("closed_tickets", closed_tickets, {"TicketClosed": _closed})
series_projection = RowProjection("series_points", series_points, {"SeriesPointRecorded": _point})

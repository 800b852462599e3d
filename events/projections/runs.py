"""ouro_runs: one row per ingested run, its numbers as last recorded."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, Column, Float, Integer, String, Table

from ouroboros_gates.events.projections.base import RowProjection
from ouroboros_gates.events.store import StoredEvent
from ouroboros_gates.events.tables import metadata

runs = Table(
    "ouro_runs",
    metadata,
    Column("run", String(200), primary_key=True),
    Column("path", String(1000), nullable=False),
    Column("digest", String(64), nullable=False),
    Column("lines", Integer, nullable=False),
    Column("malformed", Integer, nullable=False),
    Column("tool_calls", Integer, nullable=False),
    Column("tool_errors", Integer, nullable=False),
    Column("input_tokens", BigInteger, nullable=False),
    Column("output_tokens", BigInteger, nullable=False),
    Column("cache_creation_input_tokens", BigInteger, nullable=False),
    Column("cache_read_input_tokens", BigInteger, nullable=False),
    Column("cost_usd", Float, nullable=True),
    Column("started_at", String(40), nullable=True),
    Column("ended_at", String(40), nullable=True),
    Column("position", BigInteger, nullable=False),
)


def _row(event: StoredEvent) -> dict[str, Any]:
    summary = event.payload["summary"]
    usage = summary.get("usage") or {}
    return {
        "run": event.payload["run"],
        "path": event.payload["path"],
        "digest": event.payload["digest"],
        "lines": summary["lines"],
        "malformed": summary["malformed"],
        "tool_calls": summary["tool_calls"],
        "tool_errors": summary["tool_errors"],
        "input_tokens": usage.get("input_tokens", 0),
        "output_tokens": usage.get("output_tokens", 0),
        "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0),
        "cache_read_input_tokens": usage.get("cache_read_input_tokens", 0),
        "cost_usd": summary.get("cost_usd"),
        "started_at": summary.get("started_at"),
        "ended_at": summary.get("ended_at"),
        "position": event.position,
    }


projection = RowProjection("runs", runs, {"RunRecorded": _row})

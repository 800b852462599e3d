"""ouro_findings (the miners' verdicts: docs/loop.md, "Acceptance and findings"): one row per (miner, rule,
subject, run), with its proof."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import JSON, BigInteger, Column, String, Table

from ouroboros_gates.events.projections.base import RowProjection
from ouroboros_gates.events.store import StoredEvent
from ouroboros_gates.events.tables import metadata

findings = Table(
    "ouro_findings",
    metadata,
    Column("miner", String(100), primary_key=True),
    Column("rule", String(100), primary_key=True),
    Column("subject", String(500), primary_key=True),
    Column("run", String(200), primary_key=True),
    Column("severity", String(20), nullable=False),
    Column("scope", String(20), nullable=False),
    Column("tenant", String(64), nullable=False),
    Column("proof", JSON, nullable=False),
    Column("position", BigInteger, nullable=False),
)


def _row(event: StoredEvent) -> dict[str, Any]:
    finding = event.payload["finding"]
    return {
        "miner": finding["miner"],
        "rule": finding["rule"],
        "subject": orjson.dumps(finding["subject"]).decode(),
        "run": event.payload["run"],
        "severity": finding["severity"],
        "scope": finding["scope"],
        "tenant": event.meta.get("tenant") or "default",
        "proof": finding["proof"],
        "position": event.position,
    }


projection = RowProjection("findings", findings, {"FindingDerived": _row})

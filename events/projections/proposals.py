"""ouro_proposals and ouro_precheck_verdicts: what the loop proposed per ticket, and the pre-check."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Integer, String, Table, Text

from ouroboros_gates.events.projections.base import RowProjection
from ouroboros_gates.events.store import StoredEvent
from ouroboros_gates.events.tables import metadata

proposals = Table(
    "ouro_proposals",
    metadata,
    Column("ticket", Integer, primary_key=True),
    Column("comment_id", BigInteger, primary_key=True),
    Column("miner", String(100), nullable=False),
    Column("corpus", JSON, nullable=False),
    Column("instances", JSON, nullable=False),
    Column("predicate", Text, nullable=False),
    Column("posted_at", String(40), nullable=False),
    Column("position", BigInteger, nullable=False),
)

verdicts = Table(
    "ouro_precheck_verdicts",
    metadata,
    Column("position", BigInteger, primary_key=True, autoincrement=False),
    Column("ticket", Integer, nullable=False, index=True),
    Column("proposal", BigInteger, nullable=True),
    Column("miner", String(100), nullable=True),
    Column("verdict", String(20), nullable=False),
    Column("instances_named", JSON, nullable=False),
    Column("instances_found", JSON, nullable=False),
    Column("reason", Text, nullable=False),
)


def _proposal(event: StoredEvent) -> dict[str, Any]:
    p = event.payload["proposal"]
    return {
        "ticket": p["ticket"],
        "comment_id": p["comment_id"],
        "miner": p["miner"],
        "corpus": p["corpus"],
        "instances": p["instances"],
        "predicate": p["predicate"],
        "posted_at": p["posted_at"],
        "position": event.position,
    }


def _verdict(event: StoredEvent) -> dict[str, Any]:
    v = event.payload["verdict"]
    return {
        "position": event.position,
        "ticket": v["ticket"],
        "proposal": v.get("proposal"),
        "miner": v.get("miner"),
        "verdict": v["verdict"],
        "instances_named": v["instances_named"],
        "instances_found": v["instances_found"],
        "reason": v["reason"],
    }


proposals_projection = RowProjection("proposals", proposals, {"ProposalPosted": _proposal})
verdicts_projection = RowProjection("precheck_verdicts", verdicts, {"PrecheckCompleted": _verdict})

"""ouro_label_requests, ouro_labels and ouro_labeler_runs: the labeler's queue and what it proposed."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Column, Integer, String, Table, Text

from ouroboros_gates.events.projections.base import RowProjection
from ouroboros_gates.events.store import StoredEvent
from ouroboros_gates.events.tables import metadata

label_requests = Table(
    "ouro_label_requests",
    metadata,
    Column("position", BigInteger, primary_key=True, autoincrement=False),
    Column("ticket", Integer, nullable=False, index=True),
    Column("proposal", BigInteger, nullable=True),
    Column("miner", String(100), nullable=True),
    Column("corpus", JSON, nullable=False),
    Column("instances", JSON, nullable=False),
    Column("reason", Text, nullable=False),
    Column("at", String(40), nullable=False),
)

labels = Table(
    "ouro_labels",
    metadata,
    Column("position", BigInteger, primary_key=True, autoincrement=False),
    Column("ticket", Integer, nullable=False, index=True),
    Column("instance", String(200), nullable=False),
    Column("positive", Boolean, nullable=False),
    Column("quote", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("file", String(1000), nullable=False),
    Column("line", Integer, nullable=False),
    Column("acceptance", String(30), nullable=False),
    Column("why", Text, nullable=False),
)

labeler_runs = Table(
    "ouro_labeler_runs",
    metadata,
    Column("started", String(40), primary_key=True),
    Column("ended", String(40), nullable=True),
    Column("record", JSON, nullable=False),
    Column("position", BigInteger, nullable=False),
)


def _request(event: StoredEvent) -> dict[str, Any]:
    r = event.payload["request"]
    return {
        "position": event.position,
        "ticket": r["ticket"],
        "proposal": r.get("proposal"),
        "miner": r.get("miner"),
        "corpus": r["corpus"],
        "instances": r["instances"],
        "reason": r["reason"],
        "at": r["at"],
    }


def _label(event: StoredEvent) -> dict[str, Any]:
    label = event.payload["label"]
    return {
        "position": event.position,
        "ticket": label["ticket"],
        "instance": label["instance"],
        "positive": label["positive"],
        "quote": label["quote"],
        "reason": label["reason"],
        "file": label["span"]["file"],
        "line": label["span"]["line"],
        "acceptance": label["acceptance"],
        "why": label["why"],
    }


def _labeler_run(event: StoredEvent) -> dict[str, Any]:
    record = event.payload["labeler_run"]
    return {
        "started": record["started"],
        "ended": record.get("ended"),
        "record": record,
        "position": event.position,
    }


requests_projection = RowProjection("label_requests", label_requests, {"LabelRequested": _request})
labels_projection = RowProjection("labels", labels, {"LabelProposed": _label})
labeler_runs_projection = RowProjection("labeler_runs", labeler_runs, {"LabelerRunCompleted": _labeler_run})

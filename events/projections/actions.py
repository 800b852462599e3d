"""The operator's actions (``schemas.operator``) as ledger state: retries, dismissals, label reviews, replays.

Each table holds the latest action per subject (a dead letter, a decision, a label), so the API reads the
state an action left by a join, and a replay of the log rebuilds it exactly. Backtest replays keep one row
each: every replay is a result of its own.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Float, Integer, String, Table, Text

from ouroboros_gates.events.projections.base import RowProjection
from ouroboros_gates.events.store import StoredEvent
from ouroboros_gates.events.tables import metadata

__all__ = [
    "backtest_replays",
    "dead_letter_retries",
    "dismissals",
    "dismissals_projection",
    "label_reviews",
    "replays_projection",
    "retries_projection",
    "reviews_projection",
]

dead_letter_retries = Table(
    "ouro_dead_letter_retries",
    metadata,
    Column("message_id", String(128), primary_key=True),
    Column("task", String(100), nullable=False),
    Column("retry_message_id", String(128), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("at", String(40), nullable=False),
    Column("note", Text, nullable=False),
    Column("position", BigInteger, nullable=False),
)

dismissals = Table(
    "ouro_dismissals",
    metadata,
    Column("repo", String(200), primary_key=True),
    Column("pin", String(64), primary_key=True),
    Column("path", String(1000), primary_key=True),
    Column("function", String(300), primary_key=True),
    Column("family", String(100), primary_key=True),
    Column("fingerprint", String(64), nullable=False),
    Column("at", String(40), nullable=False),
    Column("note", Text, nullable=False),
    Column("position", BigInteger, nullable=False),
)

label_reviews = Table(
    "ouro_label_reviews",
    metadata,
    Column("label", BigInteger, primary_key=True, autoincrement=False),
    Column("ticket", Integer, nullable=False),
    Column("instance", String(200), nullable=False),
    Column("review", String(20), nullable=False),
    Column("at", String(40), nullable=False),
    Column("note", Text, nullable=False),
    Column("position", BigInteger, nullable=False),
)

backtest_replays = Table(
    "ouro_backtest_replays",
    metadata,
    Column("position", BigInteger, primary_key=True, autoincrement=False),
    Column("miner", String(100), nullable=False),
    Column("as_of", String(40), nullable=False),
    Column("labels", Integer, nullable=False),
    Column("runs", Integer, nullable=False),
    Column("kappa_star", Float, nullable=True),
    Column("tp", Integer, nullable=True),
    Column("fp", Integer, nullable=True),
    Column("fn", Integer, nullable=True),
    Column("pbo_status", String(200), nullable=True),
    Column("error", Text, nullable=True),
    Column("backtest", JSON, nullable=True),
    Column("at", String(40), nullable=False),
)


def _retry(event: StoredEvent) -> dict[str, Any]:
    p = event.payload
    keys = ("message_id", "task", "retry_message_id", "attempt", "at")
    return {**{key: p[key] for key in keys}, "note": p.get("note", ""), "position": event.position}


def _dismissal(event: StoredEvent) -> dict[str, Any]:
    p = event.payload
    candidate = {key: p["candidate"][key] for key in ("repo", "pin", "path", "function", "family")}
    return {
        **candidate,
        "fingerprint": p["fingerprint"],
        "at": p["at"],
        "note": p.get("note", ""),
        "position": event.position,
    }


def _review(event: StoredEvent) -> dict[str, Any]:
    p = event.payload
    keys = ("label", "ticket", "instance", "review", "at")
    return {**{key: p[key] for key in keys}, "note": p.get("note", ""), "position": event.position}


def _replay(event: StoredEvent) -> dict[str, Any]:
    p = event.payload
    result = p.get("backtest") or {}
    counts = {key: len(result[key]) if result else None for key in ("tp", "fp", "fn")}
    return {
        "position": event.position,
        "miner": p["miner"],
        "as_of": p["as_of"],
        "labels": p["labels"],
        "runs": p["runs"],
        "kappa_star": result.get("kappa_star"),
        **counts,
        "pbo_status": result.get("pbo_status"),
        "error": p.get("error"),
        "backtest": p.get("backtest"),
        "at": p["at"],
    }


retries_projection = RowProjection("dead_letter_retries", dead_letter_retries, {"DeadLetterRetried": _retry})
dismissals_projection = RowProjection("dismissals", dismissals, {"DecisionDismissed": _dismissal})
reviews_projection = RowProjection("label_reviews", label_reviews, {"LabelReviewed": _review})
replays_projection = RowProjection("backtest_replays", backtest_replays, {"BacktestReplayed": _replay})

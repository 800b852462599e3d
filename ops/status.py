"""What ``ouro status`` reports: queue depths, dead letters, projection lag, the outbox."""

from __future__ import annotations

from dataclasses import dataclass, field

from celery import Celery
from sqlalchemy import func, select

from ouroboros_gates.events import SqlEventStore
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import ProjectionStatus, status
from ouroboros_gates.workers import DEAD_LETTER_QUEUE, QUEUES
from ouroboros_gates.workers.app import app

__all__ = ["FleetStatus", "fleet_status", "queue_depths"]


@dataclass
class FleetStatus:
    """A snapshot of the fleet's health."""

    head: int
    queues: dict[str, int | None]
    dead_letters_recorded: int
    rejected: int
    outbox_pending: int
    projections: list[ProjectionStatus] = field(default_factory=list)
    broker_error: str | None = None


def queue_depths(broker: Celery = app) -> tuple[dict[str, int | None], str | None]:
    """Messages waiting per queue on ``broker`` (None when it cannot say), and the broker's error if any."""
    names = [*dict.fromkeys(QUEUES.values()), DEAD_LETTER_QUEUE]
    depths: dict[str, int | None] = dict.fromkeys(names)
    try:
        with broker.connection_for_read() as conn:
            conn.ensure_connection(max_retries=1, timeout=3)
            channel = conn.default_channel
            for name in names:
                depths[name] = int(channel.queue_declare(queue=name, passive=False, durable=True).message_count)
    except Exception as exc:  # any transport's connection error: report it, never crash status
        return depths, f"{type(exc).__name__}: {exc}"
    return depths, None


def fleet_status(store: SqlEventStore) -> FleetStatus:
    """Read everything ``ouro status`` shows."""
    with store.reading() as conn:
        head = int(conn.execute(select(func.coalesce(func.max(t.events.c.position), 0))).scalar_one())
        counts: dict[str, int] = dict(
            conn.execute(
                select(t.events.c.type, func.count())
                .where(t.events.c.type.in_(["MessageDeadLettered", "MessageRejected"]))
                .group_by(t.events.c.type)
            ).all()
        )
        pending = int(
            conn.execute(
                select(func.count()).select_from(t.outbox).where(t.outbox.c.published_at.is_(None))
            ).scalar_one()
        )
    depths, error = queue_depths()
    return FleetStatus(
        head=head,
        queues=depths,
        dead_letters_recorded=int(counts.get("MessageDeadLettered", 0)),
        rejected=int(counts.get("MessageRejected", 0)),
        outbox_pending=pending,
        projections=status(store, PROJECTIONS),
        broker_error=error,
    )

"""What ``ouro status`` reports: queue depths, dead letters, projection lag, the outbox; and the workers that
answer the broker's remote control, with the tasks they run."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from celery import Celery
from sqlalchemy import func, select

from ouroboros_gates.events import SqlEventStore
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import ProjectionStatus, status
from ouroboros_gates.workers import DEAD_LETTER_QUEUE, QUEUES
from ouroboros_gates.workers.app import app

__all__ = ["FleetStatus", "Running", "WorkersAtWork", "fleet_status", "queue_depths", "workers_at_work"]


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


def fleet_status(store: SqlEventStore, broker: Celery = app) -> FleetStatus:
    """Read everything ``ouro status`` shows (the queues on ``broker``: the API passes the one it was given)."""
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
    depths, error = queue_depths(broker)
    return FleetStatus(
        head=head,
        queues=depths,
        dead_letters_recorded=int(counts.get("MessageDeadLettered", 0)),
        rejected=int(counts.get("MessageRejected", 0)),
        outbox_pending=pending,
        projections=status(store, PROJECTIONS),
        broker_error=error,
    )


@dataclass(frozen=True)
class Running:
    """A task a worker runs now."""

    worker: str
    id: str
    name: str
    started: str | None


@dataclass(frozen=True)
class WorkersAtWork:
    """The workers that answered a ping and what they run; ``reason`` says why nobody could be asked."""

    available: bool
    workers: list[str] = field(default_factory=list)
    running: list[Running] = field(default_factory=list)
    reason: str | None = None


def _started(task: dict[str, object]) -> str | None:
    stamp = task.get("time_start")
    return datetime.fromtimestamp(stamp, UTC).isoformat() if isinstance(stamp, int | float) else None


def workers_at_work(broker: Celery = app, timeout_s: float = 1.0) -> WorkersAtWork:
    """Ask every worker over the broker's remote control (a fanout exchange) who it is and what it runs.

    The embedded broker (kombu's SQLAlchemy transport) has no fanout: that is said, not guessed."""
    try:
        with broker.connection_for_read() as conn:
            if "fanout" not in conn.transport.implements.exchange_type:
                return WorkersAtWork(False, reason=f"the {conn.transport_cls} broker has no remote control")
        inspect = broker.control.inspect(timeout=timeout_s)
        names = sorted(inspect.ping() or {})
        active = inspect.active() or {} if names else {}
    except Exception as exc:  # any transport's connection error: report it, never crash the caller
        return WorkersAtWork(False, reason=f"{type(exc).__name__}: {exc}")
    running = [
        Running(worker, str(task.get("id")), str(task.get("name")), _started(task))
        for worker, tasks in sorted(active.items())
        for task in tasks
    ]
    return WorkersAtWork(True, names, running)

"""What ``ouro status`` reports: queue depths, messages in flight, dead letters, projection lag, the outbox,
and whether the broker and the event log answered at all; and the workers that answer the broker's remote
control, with the tasks they run."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from celery import Celery
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from ouroboros_gates.events import LedgerStore, open_store
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import ProjectionStatus, status
from ouroboros_gates.schemas.errors import OuroError
from ouroboros_gates.workers import DEAD_LETTER_QUEUE, QUEUES
from ouroboros_gates.workers.app import app
from ouroboros_gates.workers.broker import in_flight

__all__ = [
    "FleetStatus",
    "Running",
    "WorkersAtWork",
    "broker_idle",
    "fleet_status",
    "held",
    "queue_depths",
    "status_at",
    "workers_at_work",
]


@dataclass
class FleetStatus:
    """A snapshot of the fleet's health; ``broker_error``/``database_error`` say what did not answer."""

    head: int
    queues: dict[str, int | None]
    dead_letters_recorded: int
    rejected: int
    outbox_pending: int
    projections: list[ProjectionStatus] = field(default_factory=list)
    broker_error: str | None = None
    in_flight: dict[str, int | None] = field(default_factory=dict)
    database_error: str | None = None

    @property
    def healthy(self) -> bool:
        """Both the broker and the event log answered."""
        return self.broker_error is None and self.database_error is None


def _names() -> list[str]:
    return [*dict.fromkeys(QUEUES.values()), DEAD_LETTER_QUEUE]


def queue_depths(broker: Celery = app) -> tuple[dict[str, int | None], str | None]:
    """Messages waiting per queue on ``broker`` (None when it cannot say), and the broker's error if any."""
    names = _names()
    depths: dict[str, int | None] = dict.fromkeys(names)
    try:
        with broker.connection_for_read() as conn:
            conn.ensure_connection(max_retries=1, timeout=3)
            channel = conn.default_channel
            for name in names:
                depths[name] = int(
                    channel.queue_declare(queue=name, passive=False, durable=True).message_count
                )
    except Exception as exc:  # any transport's connection error: report it, never crash status
        return depths, f"{type(exc).__name__}: {exc}"
    return depths, None


def held(broker: Celery = app) -> tuple[dict[str, int | None], str | None]:
    """Messages taken by a worker and not yet acknowledged, per queue (None when the broker cannot say)."""
    try:
        return dict(in_flight(broker, _names())), None
    except Exception as exc:  # any transport's connection error, as above
        return dict.fromkeys(_names()), f"{type(exc).__name__}: {exc}"


def broker_idle(queues: Iterable[str], broker: Celery = app) -> bool:
    """Nothing waits in ``queues`` and nothing taken from them is unacknowledged (False when it cannot
    say)."""
    depths, error = queue_depths(broker)
    taken, taken_error = held(broker)
    if error or taken_error:
        return False
    return all(not depths.get(q) and not taken.get(q) for q in queues)


def status_at(url: str, broker: Celery = app) -> FleetStatus:
    """``fleet_status`` of the event log at ``url``, which may not even open (then ``database_error`` says
    why)."""
    try:
        store = open_store(url)
    except (OuroError, SQLAlchemyError) as exc:  # opening migrates: the driver's error comes straight through
        depths, error = queue_depths(broker)
        taken, taken_error = held(broker)
        return FleetStatus(
            0,
            depths,
            0,
            0,
            0,
            broker_error=error or taken_error,
            in_flight=taken,
            database_error=f"{type(exc).__name__}: {exc}".splitlines()[0],
        )
    return fleet_status(store, broker)


def fleet_status(store: LedgerStore, broker: Celery = app) -> FleetStatus:
    """Read everything ``ouro status`` shows; what does not answer is reported, not raised."""
    depths, error = queue_depths(broker)
    taken, taken_error = held(broker)
    snapshot = FleetStatus(0, depths, 0, 0, 0, broker_error=error or taken_error, in_flight=taken)
    try:
        _read_log(store, snapshot)
    except OuroError as exc:  # the store's own TransientError: the database is unreachable
        snapshot.database_error = str(exc)
    return snapshot


def _read_log(store: LedgerStore, snapshot: FleetStatus) -> None:
    with store.reading() as conn:
        snapshot.head = int(
            conn.execute(select(func.coalesce(func.max(t.events.c.position), 0))).scalar_one()
        )
        counts: dict[str, int] = dict(
            conn.execute(
                select(t.events.c.type, func.count())
                .where(t.events.c.type.in_(["MessageDeadLettered", "MessageRejected"]))
                .group_by(t.events.c.type)
            ).all()
        )
        snapshot.outbox_pending = int(
            conn.execute(
                select(func.count()).select_from(t.outbox).where(t.outbox.c.published_at.is_(None))
            ).scalar_one()
        )
    snapshot.dead_letters_recorded = int(counts.get("MessageDeadLettered", 0))
    snapshot.rejected = int(counts.get("MessageRejected", 0))
    snapshot.projections = status(store, PROJECTIONS)


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
    return WorkersAtWork(True, names, _running(active))


def _running(active: dict[str, list[dict[str, object]]]) -> list[Running]:
    """Each task the workers said they run, by worker."""
    return [
        Running(worker, str(task.get("id")), str(task.get("name")), _started(task))
        for worker, tasks in sorted(active.items())
        for task in tasks
    ]

"""What the fleet adds to its brokers: the embedded broker's transport, a heartbeat on every message a worker
holds, and how many messages are held (in flight).

A message a worker has taken stays in the broker, unacknowledged, until the worker acknowledges it. When the
worker dies, the broker must hand the message to another one, but only then: a message a worker still holds is
heart-beaten by that worker's main process every ``heartbeat_s`` (a quarter of the visibility timeout), and a
message not heart-beaten for the visibility timeout is redelivered.

- Redis (kombu's transport): the unacknowledged index's score is the time the message was taken; kombu
  restores what is older than the visibility timeout. The heartbeat sets it to now (``ZADD XX``).
- Embedded (``EmbeddedTransport``, kombu's SQLAlchemy transport on SQLite): kombu marks a taken message
  invisible and never deletes it, acknowledged or not, so a message of a worker killed with SIGKILL was never
  delivered again. Here a taken message is leased (its time column set when taken), deleted when acknowledged,
  visible again when rejected or restored, and taken again once its lease is older than the visibility
  timeout; the heartbeat renews the lease. The transport is asynchronous (polled from the worker's event
  loop), so Celery runs its asynchronous prefork pool, which gives a job written to a pool child that dies
  before it starts to another child. Celery's threaded pool, which it runs for a synchronous transport, lost
  such a job and its queue lock with the child: the worker then took no more messages.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from celery import Celery, bootsteps
from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import sqlalchemy as sqla
from kombu.transport.virtual import Empty
from kombu.transport.virtual import QoS as VirtualQoS
from sqlalchemy import create_engine, delete, func, or_, select, text, update
from sqlalchemy.exc import IntegrityError, OperationalError

__all__ = ["EMBEDDED_SCHEME", "EmbeddedTransport", "Heartbeat", "held_tags", "in_flight", "kombu_url"]

log = logging.getLogger(__name__)

EMBEDDED_SCHEME = "ouro"
"""A broker URL ``ouro+sqlite:///PATH`` names the embedded transport (``kombu_url`` maps ``sqla+sqlite``)."""
QUEUE_TABLE, MESSAGE_TABLE = "ouro_broker_queue", "ouro_broker_message"
_DRAIN_BATCH = 64  # messages taken in one poll at most (the prefetch limit stops it first)


def kombu_url(url: str) -> str:
    """The URL kombu is given: an SQLite broker is the embedded transport, any other URL is kombu's own."""
    return f"{EMBEDDED_SCHEME}+{url.removeprefix('sqla+')}" if url.startswith("sqla+sqlite:") else url


class EmbeddedQoS(VirtualQoS):
    """Acknowledging deletes the message's row; rejecting without requeue too."""

    channel: EmbeddedChannel

    def ack(self, delivery_tag: str) -> None:
        self.channel.forget(delivery_tag)
        super().ack(delivery_tag)

    def reject(self, delivery_tag: str, requeue: bool = False) -> None:
        if not requeue:
            self.channel.forget(delivery_tag)
        super().reject(delivery_tag, requeue=requeue)


class EmbeddedChannel(sqla.Channel):
    """kombu's SQLAlchemy channel with leases: see the module's docstring."""

    QoS = EmbeddedQoS

    def __init__(self, connection: Any, **kwargs: Any) -> None:
        super().__init__(connection, **kwargs)
        self._rows: dict[str, int] = {}  # delivery tag -> row id, for the messages this channel holds
        self.visibility_timeout = float(connection.client.transport_options.get("visibility_timeout", 60))

    def _configure_entity_tablenames(self, opts: dict[str, Any]) -> None:
        super()._configure_entity_tablenames(
            {"queue_tablename": QUEUE_TABLE, "message_tablename": MESSAGE_TABLE}
        )

    def _engine_from_config(self) -> Any:
        # kombu hands every transport option but its own to create_engine; the fleet's options are not engine
        # arguments, so only the connection arguments go there.
        options = self.connection.client.transport_options
        return create_engine(self.connection.client.hostname, connect_args=options.get("connect_args", {}))

    def _open(self) -> Any:
        # Two processes creating the broker's tables at once (a worker starting as the loop publishes):
        # kombu's create_all checks, then creates, and the second fails on the index the first made. Its
        # tables exist now: the second try finds them.
        try:
            return super()._open()
        except OperationalError as exc:
            if "already exists" not in str(exc):
                raise
            return super()._open()

    def _get_or_create(self, queue: str) -> Any:
        # Two processes declaring the same queue at once: one insert wins, the other reads its row (kombu
        # retries only OperationalError; the IntegrityError failed the publish, a dead letter's among them).
        try:
            return super()._get_or_create(queue)
        except IntegrityError:
            self.session.rollback()
            return self.session.query(self.queue_cls).filter(self.queue_cls.name == queue).one()

    def _get(self, queue: str, timeout: Any = None) -> Any:
        obj = self._get_or_create(queue)
        model = self.message_cls
        expired = datetime.now() - timedelta(seconds=self.visibility_timeout)
        self.session.execute(text("BEGIN IMMEDIATE TRANSACTION"))
        try:
            row = (
                self.session.query(model)
                .filter(model.queue_id == obj.id, or_(model.visible.is_(True), model.sent_at < expired))
                .order_by(model.sent_at, model.id)
                .limit(1)
                .first()
            )
            if row is None:
                raise Empty()
            if not row.visible:
                log.warning(
                    "message %s of queue %s was not heart-beaten for %g s: delivering it again",
                    row.id,
                    queue,
                    self.visibility_timeout,
                )
            row.visible = False  # and its time column becomes now: the lease starts
            row.sent_at = datetime.now()
            payload: dict[str, Any] = json.loads(row.payload)
            self._rows[payload["properties"]["delivery_tag"]] = row.id
            return payload
        finally:
            self.session.commit()

    def _restore(self, message: Any) -> None:
        """Make a held message visible again (rejected with requeue, or this worker stopping)."""
        row = self._rows.pop(message.delivery_tag, None)
        if row is None:
            super()._restore(message)
            return
        table = self.message_cls.__table__
        self.session.execute(
            update(table).where(table.c.id == row).values(visible=True, version=table.c.version + 1)
        )
        self.session.commit()

    def forget(self, delivery_tag: str) -> None:
        """The message is done with: delete its row."""
        row = self._rows.pop(delivery_tag, None)
        if row is not None:
            table = self.message_cls.__table__
            self.session.execute(delete(table).where(table.c.id == row))
            self.session.commit()

    def hold(self, delivery_tags: Iterable[str]) -> None:
        """Renew the lease of the messages this channel holds."""
        rows = [self._rows[tag] for tag in delivery_tags if tag in self._rows]
        if rows:
            table = self.message_cls.__table__
            self.session.execute(
                update(table)
                .where(table.c.id.in_(rows), table.c.visible.is_(False))
                .values({table.c.timestamp: datetime.now()})  # kombu's column behind ``sent_at``
            )
            self.session.commit()

    def ready(self) -> bool:
        """Whether a queue this channel consumes has a message to take: one read, no write lock (taking one
        locks the database for writing, queue by queue, which an idle worker polling ten times a second
        paid)."""
        if not self._active_queues:
            return False
        messages, queues = self.message_cls.__table__, self.queue_cls.__table__
        expired = datetime.now() - timedelta(seconds=self.visibility_timeout)
        found = self.session.execute(
            select(messages.c.id)
            .join(queues, messages.c.queue_id == queues.c.id)
            .where(
                queues.c.name.in_(self._active_queues),
                or_(messages.c.visible.is_(True), messages.c.timestamp < expired),
            )
            .limit(1)
        ).first()
        self.session.commit()
        return found is not None

    def held_counts(self) -> dict[str, int]:
        """Messages taken and not yet acknowledged, per queue."""
        messages, queues = self.message_cls.__table__, self.queue_cls.__table__
        rows = self.session.execute(
            select(queues.c.name, func.count())
            .join(messages, messages.c.queue_id == queues.c.id)
            .where(messages.c.visible.is_(False))
            .group_by(queues.c.name)
        ).all()
        self.session.commit()
        return {str(name): int(count) for name, count in rows}


class EmbeddedTransport(sqla.Transport):
    """The embedded broker: kombu's SQLAlchemy transport with leases, polled from the worker's event loop."""

    Channel = EmbeddedChannel
    implements = sqla.Transport.implements.extend(asynchronous=True)

    def register_with_event_loop(self, connection: Any, loop: Any) -> None:
        loop.call_repeatedly(self.polling_interval, self._drain, connection)

    def _drain(self, connection: Any) -> None:
        if not any(channel.ready() for channel in self.channels if isinstance(channel, EmbeddedChannel)):
            return
        for _ in range(_DRAIN_BATCH):
            try:
                self.drain_events(connection, timeout=0)
            except (TimeoutError, Empty):
                return


TRANSPORT_ALIASES[EMBEDDED_SCHEME] = f"{__name__}:EmbeddedTransport"


def held_tags(channel: Any) -> list[str]:
    """The delivery tags of the messages a channel holds: taken, not yet acknowledged or rejected."""
    qos = getattr(channel, "qos", None)
    delivered = getattr(qos, "_delivered", None) or {}
    dirty = getattr(qos, "_dirty", None) or set()
    return [tag for tag in list(delivered) if tag not in dirty]


def hold(channel: Any, tags: list[str]) -> None:
    """Tell the broker this worker still holds ``tags`` (see the module's docstring)."""
    if not tags:
        return
    if isinstance(channel, EmbeddedChannel):
        channel.hold(tags)
    elif hasattr(channel, "unacked_index_key"):  # kombu's Redis channel
        with channel.conn_or_acquire() as client:
            client.zadd(channel.unacked_index_key, dict.fromkeys(tags, time.time()), xx=True)


class Heartbeat(bootsteps.StartStopStep):  # type: ignore[misc]
    """A worker's consumer step: every ``heartbeat_s`` it renews what the worker holds (see the module)."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.entry: Any = None

    def start(self, parent: Any) -> None:
        interval = float(parent.app.conf.get("ouro_heartbeat_s") or 15.0)
        self.entry = parent.timer.call_repeatedly(interval, self.beat, (parent,), priority=0)

    def beat(self, parent: Any) -> None:
        """Renew every message the task consumer's channel holds; a failure is retried at the next beat."""
        consumer = getattr(parent, "task_consumer", None)
        channel = getattr(consumer, "channel", None)
        try:
            hold(channel, held_tags(channel))
        except Exception as exc:  # the broker's own errors: the next beat comes well inside the timeout
            log.warning("heartbeat of the messages held failed: %s: %s", type(exc).__name__, exc)

    def stop(self, parent: Any) -> None:
        if self.entry is not None:
            self.entry.cancel()
            self.entry = None


def in_flight(app: Celery, queues: Iterable[str]) -> dict[str, int]:
    """Messages taken by a worker and not yet acknowledged, per queue (redelivered if their worker died)."""
    wanted = list(queues)
    counts: Counter[str] = Counter()
    with app.connection_for_read() as conn:
        conn.ensure_connection(max_retries=1, timeout=3)
        channel = conn.default_channel
        if isinstance(channel, EmbeddedChannel):
            counts.update(channel.held_counts())
        elif hasattr(channel, "unacked_key"):
            with channel.conn_or_acquire() as client:
                for raw in client.hvals(channel.unacked_key):
                    _payload, _exchange, routing_key = json.loads(raw)
                    counts[str(routing_key)] += 1
    return {name: counts.get(name, 0) for name in wanted}

"""Prometheus metrics (``GET /metrics``) and the fixer budget, as the API process can measure them.

Workers run in other processes, so nothing here is counted in memory: every scrape reads the broker and
the event log, and each number is one a replay of the same log gives again. Per-task run times and worker
liveness come from the workers' own Celery events, which Flower collects and exports at its ``/metrics``
(``flower_task_runtime_seconds``, ``flower_events_total``, ``flower_worker_online``); scrape both.

- ``ouro_broker_up`` (gauge): 1 when the broker answered this scrape, else 0.
- ``ouro_queue_depth{queue}`` (gauge): messages waiting on a queue, the dead-letter queue included; absent
  when the broker did not answer.
- ``ouro_event_log_head`` (gauge): the event log's last position.
- ``ouro_projection_lag_events{projection}`` (gauge): events a ledger projection has not folded yet.
- ``ouro_outbox_pending`` (gauge): follow-up messages committed but not yet published;
  ``ouro_outbox_oldest_pending_seconds`` (gauge): the age of the oldest (0 when none).
- ``ouro_task_outcomes_total{task,outcome}`` (counter): messages per task that were ``handled`` (their
  result committed), ``rejected`` at the door, or ``dead_lettered`` after their retries.
- ``ouro_task_latency_seconds{task}`` (histogram): from a follow-up message entering the outbox to its task
  committing its result. Only outbox messages: the log holds no send time for a message published by a
  hook, the CLI or beat, so those are not in it.
- ``ouro_fixer_spend_usd_today`` (gauge): Σ cost of the fixer sessions started today (the budget's day in
  ``OURO_TIMEZONE``), from the ledger; ``ouro_fixer_daily_cap_usd`` (gauge): ``OURO_FIXER_DAILY_CAP_USD``,
  0 meaning fixers are off.
- ``ouro_trigger_occurrences_total{trigger,outcome}`` (counter): cron trigger occurrences that
  ``published``, were ``skipped_running`` or ``skipped_not_built``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from celery import Celery
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, select

from ouroboros_gates.events import DEAD_LETTER, SqlEventStore
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projections.loop import fixer_sessions
from ouroboros_gates.events.projector import status
from ouroboros_gates.ops.status import queue_depths
from ouroboros_gates.workers.triggers import lock_rows

__all__ = [
    "LATENCY_BUCKETS",
    "FleetCollector",
    "Spend",
    "registry_for",
    "render",
    "spend_today",
]

LATENCY_BUCKETS = (0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0)
_TRIGGER_COUNTS = (("published", "runs"), ("skipped_running", "skips"), ("skipped_not_built", "not_built"))


@dataclass(frozen=True)
class Spend:
    """Fixer spend on one budget day against the daily cap."""

    day: str
    zone: str
    spent_usd: float
    cap_usd: float
    sessions: int

    @property
    def fixers_on(self) -> bool:
        """Fixers launch only under a cap above zero."""
        return self.cap_usd > 0

    @property
    def remaining_usd(self) -> float:
        """What the day has left (never below zero)."""
        return max(self.cap_usd - self.spent_usd, 0.0)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # SQLite hands back naive UTC


def spend_today(store: SqlEventStore, zone: ZoneInfo, cap_usd: float, now: datetime | None = None) -> Spend:
    """Σ cost of the fixer sessions (ledger) started on ``now``'s day in ``zone``: the budget's day."""
    local = (now or datetime.now(UTC)).astimezone(zone)
    start = datetime.combine(local.date(), time(), zone)
    end = datetime.combine(local.date() + timedelta(days=1), time(), zone)
    with store.reading() as conn:
        rows = conn.execute(select(fixer_sessions.c.started, fixer_sessions.c.cost_usd)).all()
    costs = [float(cost) for started, cost in rows if start <= datetime.fromisoformat(started) < end]
    return Spend(local.date().isoformat(), zone.key, round(sum(costs), 6), cap_usd, len(costs))


class FleetCollector(Collector):
    """Reads the broker and the event log at each scrape (see the module's table)."""

    def __init__(self, store: SqlEventStore, broker: Celery, zone: ZoneInfo, cap_usd: float) -> None:
        self.store, self.broker, self.zone, self.cap_usd = store, broker, zone, cap_usd

    def collect(self) -> Iterator[Metric]:
        """Every metric, freshly read."""
        yield from self._broker()
        yield from self._log()
        yield from self._outcomes()
        yield self._latency()
        yield from self._spend()
        yield self._triggers()

    def _broker(self) -> Iterator[Metric]:
        depths, error = queue_depths(self.broker)
        yield GaugeMetricFamily("ouro_broker_up", "1 when the broker answered this scrape.", value=float(not error))
        depth = GaugeMetricFamily("ouro_queue_depth", "Messages waiting on a queue.", labels=["queue"])
        for queue, count in depths.items():
            if count is not None:
                depth.add_metric([queue], float(count))
        yield depth

    def _log(self) -> Iterator[Metric]:
        lags = status(self.store, PROJECTIONS)
        with self.store.reading() as conn:
            head = int(conn.execute(select(func.coalesce(func.max(t.events.c.position), 0))).scalar_one())
            pending, oldest = conn.execute(
                select(func.count(), func.min(t.outbox.c.created_at)).where(t.outbox.c.published_at.is_(None))
            ).one()
        yield GaugeMetricFamily("ouro_event_log_head", "The event log's last position.", value=float(head))
        lag = GaugeMetricFamily(
            "ouro_projection_lag_events", "Events a projection has not folded.", labels=["projection"]
        )
        for item in lags:
            lag.add_metric([item.name], float(item.lag))
        yield lag
        yield GaugeMetricFamily("ouro_outbox_pending", "Follow-up messages not yet published.", value=float(pending))
        age = (datetime.now(UTC) - _aware(oldest)).total_seconds() if oldest is not None else 0.0
        yield GaugeMetricFamily("ouro_outbox_oldest_pending_seconds", "Age of the oldest unpublished.", value=age)

    def _outcomes(self) -> Iterator[Metric]:
        handled = t.handled_messages.c
        task_of = t.events.c.payload["task"].as_string()
        with self.store.reading() as conn:
            consumers = conn.execute(select(handled.consumer, func.count()).group_by(handled.consumer)).all()
            dead = conn.execute(
                select(task_of, func.count()).where(t.events.c.type == "MessageDeadLettered").group_by(task_of)
            ).all()
        family = CounterMetricFamily(
            "ouro_task_outcomes", "Messages per task by outcome, from the event log.", labels=["task", "outcome"]
        )
        for consumer, count in consumers:
            if consumer == DEAD_LETTER:
                continue  # counted per task below, from the events that name it
            task, _, rejected = str(consumer).partition(":")
            family.add_metric([task, "rejected" if rejected else "handled"], float(count))
        for task, count in dead:
            family.add_metric([str(task), "dead_lettered"], float(count))
        yield family

    def _latency(self) -> Metric:
        handled, outbox = t.handled_messages.c, t.outbox.c
        query = select(outbox.task, outbox.created_at, handled.handled_at).join_from(
            t.outbox,
            t.handled_messages,
            (handled.message_id == outbox.message_id) & (handled.consumer == outbox.task),
        )
        per_task: dict[str, list[float]] = {}
        with self.store.reading() as conn:
            for task, created, done in conn.execute(query):
                per_task.setdefault(str(task), []).append(max((_aware(done) - _aware(created)).total_seconds(), 0.0))
        family = HistogramMetricFamily(
            "ouro_task_latency_seconds", "Outbox to committed result, per task.", labels=["task"]
        )
        for task, seconds in sorted(per_task.items()):
            buckets = [(str(bound), float(sum(s <= bound for s in seconds))) for bound in LATENCY_BUCKETS]
            family.add_metric([task], [*buckets, ("+Inf", float(len(seconds)))], sum_value=sum(seconds))
        return family

    def _spend(self) -> Iterator[Metric]:
        spend = spend_today(self.store, self.zone, self.cap_usd)
        yield GaugeMetricFamily(
            "ouro_fixer_spend_usd_today", "Fixer spend on today's budget day.", value=spend.spent_usd
        )
        yield GaugeMetricFamily("ouro_fixer_daily_cap_usd", "Fixers' daily cap; 0 = fixers off.", value=self.cap_usd)

    def _triggers(self) -> Metric:
        family = CounterMetricFamily(
            "ouro_trigger_occurrences", "Cron trigger occurrences by outcome.", labels=["trigger", "outcome"]
        )
        for name, row in sorted(lock_rows(self.store.engine).items()):
            for outcome, column in _TRIGGER_COUNTS:
                family.add_metric([name, outcome], float(row[column]))
        return family


def registry_for(store: SqlEventStore, broker: Celery, zone: ZoneInfo, cap_usd: float) -> CollectorRegistry:
    """A registry holding only the fleet's collector (no process metrics of the API itself)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FleetCollector(store, broker, zone, cap_usd))
    return registry


def render(registry: CollectorRegistry) -> bytes:
    """The Prometheus text exposition of ``registry``."""
    return generate_latest(registry)

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
- ``ouro_decisions{operating_point}`` (gauge): the decider's decisions in the ledger at ``block``,
  ``advisory`` and ``drop``; ``ouro_decisions_dismissed`` (gauge): those an operator dismissed.
- ``ouro_findings{miner,scope}`` (gauge): findings in the ledger, per miner and scope (every tenant's).
- ``ouro_gate_denials_total{miner}`` (counter): tool calls a miner's deny gate refused, counted from the
  refusal lines the hook wrote into the recorded runs (``ops.denials``).
- From the measurer's snapshot (``/api/ouroboros``; absent until there is one, a value the measurer could
  not take is absent too): ``ouro_struggle_rate_per_1k_tool_calls{period}`` (gauge, the latest ``day`` and
  ``week``), ``ouro_compounding{period,bound}`` (gauge: ``value``, ``low``, ``high`` per ``week`` and
  ``day``), ``ouro_h_fleet`` (gauge) and ``ouro_h_fleet_offenders`` (gauge: runs below the floor).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import orjson
from celery import Celery
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, select

from ouroboros_gates.events import DEAD_LETTER, LedgerStore
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.projections import PROJECTIONS, actions, decisions, findings, runs
from ouroboros_gates.events.projections.loop import fixer_sessions
from ouroboros_gates.events.projector import status
from ouroboros_gates.ops.denials import count_denials
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


def spend_today(store: LedgerStore, zone: ZoneInfo, cap_usd: float, now: datetime | None = None) -> Spend:
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

    def __init__(
        self, store: LedgerStore, broker: Celery, zone: ZoneInfo, cap_usd: float, state: Path | None = None
    ) -> None:
        self.store, self.broker, self.zone, self.cap_usd, self.state = store, broker, zone, cap_usd, state

    def collect(self) -> Iterator[Metric]:
        """Every metric, freshly read."""
        yield from self._broker()
        yield from self._log()
        yield from self._outcomes()
        yield self._latency()
        yield from self._spend()
        yield self._triggers()
        yield from self._ledger()
        yield self._denials()
        yield from self._snapshot()

    def _broker(self) -> Iterator[Metric]:
        depths, error = queue_depths(self.broker)
        yield GaugeMetricFamily(
            "ouro_broker_up", "1 when the broker answered this scrape.", value=float(not error)
        )
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
        yield GaugeMetricFamily(
            "ouro_outbox_pending", "Follow-up messages not yet published.", value=float(pending)
        )
        age = (datetime.now(UTC) - _aware(oldest)).total_seconds() if oldest is not None else 0.0
        yield GaugeMetricFamily(
            "ouro_outbox_oldest_pending_seconds", "Age of the oldest unpublished.", value=age
        )

    def _outcomes(self) -> Iterator[Metric]:
        handled = t.handled_messages.c
        task_of = t.events.c.payload["task"].as_string()
        with self.store.reading() as conn:
            consumers = conn.execute(select(handled.consumer, func.count()).group_by(handled.consumer)).all()
            dead = conn.execute(
                select(task_of, func.count())
                .where(t.events.c.type == "MessageDeadLettered")
                .group_by(task_of)
            ).all()
        family = CounterMetricFamily(
            "ouro_task_outcomes",
            "Messages per task by outcome, from the event log.",
            labels=["task", "outcome"],
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
                per_task.setdefault(str(task), []).append(
                    max((_aware(done) - _aware(created)).total_seconds(), 0.0)
                )
        family = HistogramMetricFamily(
            "ouro_task_latency_seconds", "Outbox to committed result, per task.", labels=["task"]
        )
        for task, seconds in sorted(per_task.items()):
            family.add_metric([task], _buckets(seconds), sum_value=sum(seconds))
        return family

    def _spend(self) -> Iterator[Metric]:
        spend = spend_today(self.store, self.zone, self.cap_usd)
        yield GaugeMetricFamily(
            "ouro_fixer_spend_usd_today", "Fixer spend on today's budget day.", value=spend.spent_usd
        )
        yield GaugeMetricFamily(
            "ouro_fixer_daily_cap_usd", "Fixers' daily cap; 0 = fixers off.", value=self.cap_usd
        )

    def _triggers(self) -> Metric:
        family = CounterMetricFamily(
            "ouro_trigger_occurrences", "Cron trigger occurrences by outcome.", labels=["trigger", "outcome"]
        )
        for name, row in sorted(lock_rows(self.store.side_tables).items()):
            for outcome, column in _TRIGGER_COUNTS:
                family.add_metric([name, outcome], float(row[column]))
        return family

    def _ledger(self) -> Iterator[Metric]:
        table, dismissed, found = decisions.decisions, actions.dismissals, findings.findings
        with self.store.reading() as conn:
            actions_: dict[str, int] = dict(
                conn.execute(select(table.c.action, func.count()).group_by(table.c.action)).all()
            )
            gone = int(conn.execute(select(func.count()).select_from(dismissed)).scalar_one())
            by_miner = conn.execute(
                select(found.c.miner, found.c.scope, func.count()).group_by(found.c.miner, found.c.scope)
            ).all()
        points = GaugeMetricFamily(
            "ouro_decisions", "Decisions per operating point.", labels=["operating_point"]
        )
        for point in ("block", "advisory", "drop"):
            points.add_metric([point], float(actions_.get(point.upper(), 0)))
        yield points
        yield GaugeMetricFamily(
            "ouro_decisions_dismissed", "Decisions an operator dismissed.", value=float(gone)
        )
        family = GaugeMetricFamily(
            "ouro_findings", "Findings per miner and scope.", labels=["miner", "scope"]
        )
        for miner, scope, count in sorted(by_miner):
            family.add_metric([str(miner), str(scope)], float(count))
        yield family

    def _denials(self) -> Metric:
        with self.store.reading() as conn:
            paths = [Path(p) for p in conn.execute(select(runs.runs.c.path)).scalars()]
        if self.state is not None:
            paths = _under(self.state, paths)
        family = CounterMetricFamily("ouro_gate_denials", "Calls refused per miner's gate.", labels=["miner"])
        for miner, count in sorted(count_denials(paths).items()):
            family.add_metric([miner], float(count))
        return family

    def _snapshot(self) -> Iterator[Metric]:
        snap = _read_snapshot(self.state)
        if snap is None:
            return
        yield from _series_families(snap)
        yield from _h_fleet_families(snap)


def _series_families(snap: dict[str, Any]) -> tuple[GaugeMetricFamily, GaugeMetricFamily]:
    """The latest struggle rate, and the compounding rate with its interval, per day and per week."""
    rate = GaugeMetricFamily(
        "ouro_struggle_rate_per_1k_tool_calls",
        "Latest struggle rate per 1,000 tool calls.",
        labels=["period"],
    )
    compounding = GaugeMetricFamily(
        "ouro_compounding",
        "Compounding rate of the struggle rate, with its 95% interval.",
        labels=["period", "bound"],
    )
    for period, suffix in (("day", ""), ("week", "_weekly")):
        _add(rate, [period], _latest(snap, f"struggle_rate_per_1k_tool_calls{suffix}"))
        point = _latest_point(snap, f"compounding_per_{period}")
        for bound in ("value", "low", "high"):
            _add(compounding, [period, bound], point.get(bound))
    return rate, compounding


def _h_fleet_families(snap: dict[str, Any]) -> Iterator[Metric]:
    """h_fleet and how many runs fall below the h_r floor, when the snapshot has them."""
    fleet = snap.get("h_fleet") or {}
    value = fleet.get("value")
    if isinstance(value, int | float):
        yield GaugeMetricFamily(
            "ouro_h_fleet", "Cache reads over prompt tokens, all runs.", value=float(value)
        )
    offenders = fleet.get("offenders")
    if isinstance(offenders, list):
        yield GaugeMetricFamily(
            "ouro_h_fleet_offenders", "Runs below the h_r floor.", value=float(len(offenders))
        )


def _buckets(seconds: list[float]) -> list[tuple[str, float]]:
    """A latency histogram's cumulative buckets, ``+Inf`` last."""
    buckets = [(str(bound), float(sum(s <= bound for s in seconds))) for bound in LATENCY_BUCKETS]
    return [*buckets, ("+Inf", float(len(seconds)))]


def _under(state: Path, paths: list[Path]) -> list[Path]:
    """The recorded run paths, those relative to the state directory made absolute."""
    return [p if p.is_absolute() else state / p for p in paths]


def _read_snapshot(state: Path | None) -> dict[str, Any] | None:
    try:
        found = orjson.loads((state / "ouroboros.json").read_bytes()) if state is not None else None
    except (OSError, orjson.JSONDecodeError):
        return None
    return found if isinstance(found, dict) else None


def _latest_point(snapshot: dict[str, Any], name: str) -> dict[str, Any]:
    points = (snapshot.get("series") or {}).get(f"ouroboros.{name}") or []
    dated = _dated(points)
    return max(dated, key=lambda p: str(p["at"])) if dated else {}


def _dated(points: list[Any]) -> list[dict[str, Any]]:
    """The points that are objects with a time (``at``) as text."""
    return [p for p in points if isinstance(p, dict) and isinstance(p.get("at"), str)]


def _latest(snapshot: dict[str, Any], name: str) -> Any:
    return _latest_point(snapshot, name).get("value")


def _add(family: GaugeMetricFamily, labels: list[str], value: Any) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        family.add_metric(labels, float(value))


def registry_for(
    store: LedgerStore, broker: Celery, zone: ZoneInfo, cap_usd: float, state: Path | None = None
) -> CollectorRegistry:
    """A registry holding only the fleet's collector (no process metrics of the API itself); ``state`` is
    where the measurer's snapshot and the recorded runs lie."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FleetCollector(store, broker, zone, cap_usd, state))
    return registry


def render(registry: CollectorRegistry) -> bytes:
    """The Prometheus text exposition of ``registry``."""
    return generate_latest(registry)

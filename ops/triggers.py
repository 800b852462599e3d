"""``ouro triggers``: when each cron trigger fires next, and the measurement its cadence was derived from.

The occurrences are computed the way Celery beat decides them, not by a second cron implementation: a
simulated beat asks the entry's own ``crontab.is_due`` at each tick (``is_due`` says how long to sleep,
never more than beat's ``beat_max_loop_interval``), so what this prints is what beat does, daylight saving
time included: in America/Los_Angeles a wall-clock time that does not exist (spring forward) is not fired,
and one that happens twice (fall back) is fired once, the first time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from celery import Celery

from ouroboros_gates.workers.triggers import TRIGGERS, Trigger

__all__ = ["BEAT_MAX_LOOP_INTERVAL_S", "TriggerPlan", "next_occurrences", "plan"]

BEAT_MAX_LOOP_INTERVAL_S = 300.0  # Celery's default beat_max_loop_interval: beat looks at least this often


def next_occurrences(trigger: Trigger, after: datetime, count: int, zone: ZoneInfo) -> list[datetime]:
    """The next ``count`` instants (aware, in ``zone``) at which beat fires ``trigger`` after ``after``."""
    clock = [after.astimezone(UTC)]
    # A private app carries the zone, so the simulation never touches the process's current Celery app.
    host = Celery("ouroboros-triggers", set_as_current=False)
    host.conf.update(timezone=zone.key, enable_utc=True)
    schedule = trigger.schedule(nowfun=lambda: clock[0], app=host)
    last_run = clock[0]  # beat starts an entry's clock at its own start
    found: list[datetime] = []
    while len(found) < count:
        due, sleep_s = schedule.is_due(last_run)
        if due:
            fired = clock[0].replace(second=0, microsecond=0)
            found.append(fired.astimezone(zone))
            last_run = clock[0]
        clock[0] += timedelta(seconds=max(min(float(sleep_s), BEAT_MAX_LOOP_INTERVAL_S), 1.0))
    return found


@dataclass(frozen=True)
class TriggerPlan:
    """One trigger as ``ouro triggers`` shows it."""

    name: str
    task: str
    cron: str
    zone: str
    next: list[datetime]
    derived_from: str
    last: dict[str, Any] | None


def plan(
    zone: ZoneInfo, after: datetime, count: int = 3, rows: dict[str, dict[str, Any]] | None = None
) -> list[TriggerPlan]:
    """Every trigger's next ``count`` occurrences, with its lock row when ``rows`` has one."""
    rows = rows or {}
    return [
        TriggerPlan(
            name=trigger.name,
            task=trigger.task,
            cron=trigger.cron,
            zone=zone.key,
            next=next_occurrences(trigger, after, count, zone),
            derived_from=trigger.derived_from,
            last=rows.get(trigger.name),
        )
        for trigger in TRIGGERS.values()
    ]

"""The four cron triggers of the loop and what ``fleet.trigger`` (``workers.fleet``), the one task every cron
entry goes through, does at each occurrence.

Celery beat fires ``fleet.trigger`` with a trigger's name at each occurrence of its cron entry (in
``OURO_TIMEZONE``, America/Los_Angeles by default). The task publishes the trigger's message, unless the
previous occurrence still runs: **skip while running** is a lock, not a flag. The lock is one row per
trigger in ``ouro_trigger_locks``, a side table in the event log's own database (``events.side``: it works
on the embedded SQLite default as on PostgreSQL, and no replay rebuilds it), taken with one atomic statement::

    UPDATE ouro_trigger_locks SET message_id = :new, expires_at = :now + lock_s, …
     WHERE name = :trigger AND (expires_at < :now OR <the held message was handled, rejected or
     dead-lettered>)

The previous occurrence "still runs" while the message it published has not been handled by its task (no
row in ``ouro_handled_messages`` under the task, its rejection or the dead-letter producer) and its lock has
not expired. Of two beats firing the same trigger at once exactly one statement matches the row; the other
records a skip. A run that crashed (its message lost) stops blocking when its lock expires: ``lock_s`` is
the task time limit plus the broker's visibility timeout, after which a task has ended or the message of a
killed worker has come back.

A trigger whose task is not registered yet (``miner.scan``) or has no message type records ``skipped: not
built`` and publishes nothing. The pre-check's occurrence publishes ``PrecheckSweep``, which the prechecker
turns into one ``PrecheckTicket`` per open mining ticket through its outbox; the merge train's publishes
``RunMergeTrain``. The counts and the last outcome of every trigger stay
on its row, where ``ouro triggers`` and ``GET /metrics`` read them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from celery.schedules import crontab
from sqlalchemy import (
    exists,
    or_,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

from ouroboros_gates.events import SideTables, settling
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.tables import trigger_locks
from ouroboros_gates.schemas import MESSAGE_TYPES, Message, content_id
from ouroboros_gates.schemas.errors import PermanentError

__all__ = [
    "NOT_BUILT",
    "PUBLISHED",
    "RUNNING",
    "TRIGGERS",
    "Fired",
    "Trigger",
    "beat_schedule",
    "fire",
    "lock_rows",
    "locks",
]

log = logging.getLogger(__name__)

PUBLISHED = "published"
RUNNING = "skipped: running"
NOT_BUILT = "skipped: not built"


@dataclass(frozen=True)
class Trigger:
    """One cron entry: what it publishes, when, and the measurement its cadence was derived from."""

    name: str
    task: str
    minute: str
    hour: str
    period_s: int  # the spacing of occurrences: a trigger message older than this is dropped, not replayed
    derived_from: str

    @property
    def cron(self) -> str:
        """The entry in crontab notation (minute hour day-of-month month day-of-week)."""
        return f"{self.minute} {self.hour} * * *"

    def schedule(self, **kwargs: Any) -> crontab:
        """Celery's crontab for this entry (in the app's timezone)."""
        return crontab(minute=self.minute, hour=self.hour, **kwargs)


# Cadences. Each is derived from a measurement, named in the string ``ouro triggers`` prints beside it.
TRIGGERS: dict[str, Trigger] = {
    trigger.name: trigger
    for trigger in (
        # Every 5 min: the template miner's backtest lead, 772 - 468 = 304 s, is the time a finding has
        # before the operator flags it by hand; a scan at most 300 s apart lands inside that lead
        # (docs/loop.md, "Worked example").
        Trigger(
            "detector",
            "miner.scan",
            "*/5",
            "*",
            300,
            "template miner backtest lead t_flag - (t_start + k*) = 772 - 468 = 304 s (docs/loop.md, worked "
            "example):"
            " a scan every 300 s fires before the operator's flag",
        ),
        # Hourly at :20: 107 fixer sessions ran on 2026-10-03, about 4.5 an hour; an hourly sweep hands the
        # fixers about four verdicts at once, the four calls the overnight loop ran at a time (docs/loop.md,
        # "Pre-check replay" and "First mining run").
        Trigger(
            "precheck",
            "prechecker.sweep",
            "20",
            "*",
            3600,
            "107 fixer sessions on 2026-10-03 = 4.5 launches/hour (docs/loop.md, pre-check replay): hourly "
            "gives"
            " batches of about 4, the concurrency the overnight loop ran at (docs/loop.md, first mining run)",
        ),
        # Daily at 00:05 local: #330's series are local calendar days and weeks, so a day is complete at
        # midnight; five minutes is one detector interval for the day's last runs to be recorded.
        Trigger(
            "measure",
            "measurer.measure",
            "5",
            "0",
            86400,
            "#330's struggle rate is per America/Los_Angeles day and week (Amendment 1): a day closes at"
            " midnight; +5 min = one detector interval (304 s lead) for its last runs to land",
        ),
        # Hourly at :40: the same 4.5 sessions an hour bound the new ready heads an hour; each head is tried
        # once, twenty minutes after the pre-check so its launches of the hour have had time to open
        # (docs/loop.md, "Triggers").
        Trigger(
            "merge_train",
            "merger.train",
            "40",
            "*",
            3600,
            "107 sessions/day on 2026-10-03 = at most ~4.5 new heads/hour, each tried once (docs/loop.md, "
            "merge"
            " train): hourly, 20 min after the pre-check sweep",
        ),
    )
}


def beat_schedule() -> dict[str, dict[str, Any]]:
    """The beat entries: ``fleet.trigger(name)`` on each trigger's crontab, expiring after one period."""
    return {
        f"trigger-{trigger.name}": {
            "task": "fleet.trigger",
            "schedule": trigger.schedule(),
            "args": (trigger.name,),
            # A trigger not started within one period is dropped: after an outage beat never replays a
            # backlog.
            "options": {"queue": "fleet", "expires": trigger.period_s},
        }
        for trigger in TRIGGERS.values()
    }


locks = trigger_locks  # one row per trigger, in the event log's database (migration 0004)


@dataclass(frozen=True)
class Fired:
    """What one occurrence of a trigger did."""

    trigger: str
    outcome: str
    message_id: str | None = None


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _message(trigger: Trigger, at: datetime, tenant: str) -> Message | None:
    """The trigger's message for the occurrence at ``at``, or None when its task has no message type."""
    kind = next((cls for cls in MESSAGE_TYPES.values() if trigger.task == cls.TASK), None)
    if kind is None:
        return None
    message_id = content_id("trigger", trigger.name, at.isoformat())
    fields: dict[str, Any] = {"message_id": message_id, "correlation_id": message_id, "tenant": tenant}
    if "at" in kind.model_fields:
        fields["at"] = at  # built at fire time: a Measure measures the instant its trigger fired
    return kind.model_validate(fields)


def _insert_row(dialect: str, name: str, task: str) -> Any:
    values = {"name": name, "task": task, "expires_at": 0, "runs": 0, "skips": 0, "not_built": 0}
    if dialect == "postgresql":
        return postgresql.insert(locks).values(**values).on_conflict_do_nothing(index_elements=["name"])
    return sqlite.insert(locks).values(**values).on_conflict_do_nothing(index_elements=["name"])


def _finished(task: str) -> Any:
    """True for a lock row whose message its task handled, rejected, or the fleet dead-lettered."""
    handled = t.handled_messages.c
    return exists().where(
        handled.message_id == locks.c.message_id,
        handled.consumer.in_(settling(task)),
    )


def _record(side: SideTables, trigger: Trigger, outcome: str, now: datetime) -> None:
    counter = locks.c.skips if outcome == RUNNING else locks.c.not_built
    with side.writing() as conn:
        conn.execute(_insert_row(side.dialect, trigger.name, trigger.task))
        conn.execute(
            update(locks)
            .where(locks.c.name == trigger.name)
            .values({counter.name: counter + 1, "last_outcome": outcome, "last_at": _ms(now)})
        )


def fire(
    name: str,
    side: SideTables,
    *,
    registered: Collection[str],
    publish: Callable[[Message], None],
    tenant: str = "default",
    lock_s: float = 3600.0,
    now: datetime | None = None,
) -> Fired:
    """Fire one occurrence of trigger ``name``: publish its message unless the previous one still runs."""
    trigger = TRIGGERS.get(name)
    if trigger is None:
        raise PermanentError(f"unknown trigger {name!r}; known: {', '.join(sorted(TRIGGERS))}")
    at = (now or datetime.now(UTC)).astimezone(UTC)
    message = _message(trigger, at, tenant) if trigger.task in registered else None
    if message is None:
        _record(side, trigger, NOT_BUILT, at)
        log.info("trigger %s: %s (%s has no task or message type yet)", name, NOT_BUILT, trigger.task)
        return Fired(name, NOT_BUILT)
    take = (
        update(locks)
        .where(locks.c.name == name, or_(locks.c.expires_at < _ms(at), _finished(trigger.task)))
        .values(
            task=trigger.task,
            message_id=message.message_id,
            expires_at=_ms(at) + int(lock_s * 1000),
            fired_at=_ms(at),
            runs=locks.c.runs + 1,
            last_outcome=PUBLISHED,
            last_at=_ms(at),
        )
    )
    with side.writing() as conn:
        conn.execute(_insert_row(side.dialect, name, trigger.task))
        taken = conn.execute(take).rowcount == 1
    if not taken:
        _record(side, trigger, RUNNING, at)
        log.warning("trigger %s: %s (the previous occurrence still holds the lock)", name, RUNNING)
        return Fired(name, RUNNING)
    try:
        publish(message)
    except BaseException:
        # Nothing was sent: free the lock at once rather than blocking every occurrence until it expires.
        with side.writing() as conn:
            conn.execute(update(locks).where(locks.c.message_id == message.message_id).values(expires_at=0))
        raise
    log.info("trigger %s: published %s %s", name, trigger.task, message.message_id)
    return Fired(name, PUBLISHED, message.message_id)


def lock_rows(side: SideTables) -> dict[str, dict[str, Any]]:
    """Every trigger's lock row by name (empty before the first occurrence)."""
    if not side.has_table(locks.name):
        return {}
    with side.reading() as conn:
        return {row["name"]: dict(row) for row in conn.execute(select(locks)).mappings()}

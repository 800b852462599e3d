"""The cron triggers: the skip-while-running lock (concurrent beats, expiry after a crash), "not built",
the beat schedule, and the next occurrences across daylight saving time, as beat computes them."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import delete

from ouroboros_gates.events import Metadata, SideTables, SqlEventStore, ensure_schema
from ouroboros_gates.ops.triggers import next_occurrences
from ouroboros_gates.schemas import Measure, Message, PrecheckSweep, RunMergeTrain
from ouroboros_gates.schemas.errors import PermanentError
from ouroboros_gates.workers.app import app
from ouroboros_gates.workers.triggers import (
    NOT_BUILT,
    PUBLISHED,
    RUNNING,
    TRIGGERS,
    Fired,
    fire,
    lock_rows,
    locks,
)

LA = ZoneInfo("America/Los_Angeles")
T0 = datetime(2026, 10, 5, 7, 5, tzinfo=UTC)
BUILT = {"measurer.measure"}


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest) -> SqlEventStore:
    """The event log's store on SQLite (embedded) and on PostgreSQL, its trigger locks emptied."""
    url = request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url")
    found = SqlEventStore.from_url(url)
    ensure_schema(found.engine)
    with found.engine.begin() as conn:
        conn.execute(delete(locks))
    return found


def _fire(
    side: SideTables, sent: list[Message], at: datetime, lock_s: float = 3600, name: str = "measure"
) -> Fired:
    return fire(name, side, registered=BUILT, publish=sent.append, lock_s=lock_s, now=at)


def _handle(store: SqlEventStore, message_id: str, consumer: str = "measurer.measure") -> None:
    store.commit([], Metadata(producer=consumer, message_id=message_id))


def test_two_concurrent_beats_run_the_trigger_once(store: SqlEventStore) -> None:
    for round_ in range(5):
        at = T0 + timedelta(days=round_)
        sent: list[Message] = []
        barrier = threading.Barrier(2)
        results: list[Fired] = []

        def beat(sent: list[Message], at: datetime, barrier: threading.Barrier, results: list[Fired]) -> None:
            barrier.wait()
            results.append(_fire(store.side_tables, sent, at))

        threads = [threading.Thread(target=beat, args=(sent, at, barrier, results)) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert sorted(r.outcome for r in results) == [PUBLISHED, RUNNING], results
        assert len(sent) == 1 and isinstance(sent[0], Measure) and sent[0].at == at
        _handle(store, sent[0].message_id)  # the measure ran: the next day's occurrence may fire
    row = lock_rows(store.side_tables)["measure"]
    assert (row["runs"], row["skips"], row["not_built"]) == (5, 5, 0)


def test_an_occurrence_skips_while_the_previous_runs_and_fires_once_it_is_handled(
    store: SqlEventStore,
) -> None:
    sent: list[Message] = []
    first = _fire(store.side_tables, sent, T0)
    assert first.outcome == PUBLISHED and first.message_id == sent[0].message_id
    assert _fire(store.side_tables, sent, T0 + timedelta(minutes=5)).outcome == RUNNING
    _handle(store, sent[0].message_id)
    again = _fire(store.side_tables, sent, T0 + timedelta(minutes=10))
    assert again.outcome == PUBLISHED and len(sent) == 2 and sent[1].message_id != sent[0].message_id
    # A rejected or dead-lettered message also ends its run.
    _handle(store, sent[1].message_id, consumer="fleet.dead_letter")
    assert _fire(store.side_tables, sent, T0 + timedelta(minutes=15)).outcome == PUBLISHED
    assert lock_rows(store.side_tables)["measure"]["last_outcome"] == PUBLISHED


def test_a_crashed_runs_lock_expires(store: SqlEventStore) -> None:
    sent: list[Message] = []
    assert (
        _fire(store.side_tables, sent, T0, lock_s=60).outcome == PUBLISHED
    )  # its worker dies: never handled
    assert _fire(store.side_tables, sent, T0 + timedelta(seconds=59), lock_s=60).outcome == RUNNING
    assert _fire(store.side_tables, sent, T0 + timedelta(seconds=61), lock_s=60).outcome == PUBLISHED
    assert len(sent) == 2
    row = lock_rows(store.side_tables)["measure"]
    assert (row["runs"], row["skips"], row["message_id"]) == (2, 1, sent[1].message_id)


def test_a_failed_publish_frees_the_lock(store: SqlEventStore) -> None:
    def broken(_: Message) -> None:
        raise ConnectionError("broker down")

    with pytest.raises(ConnectionError):
        fire("measure", store.side_tables, registered=BUILT, publish=broken, now=T0)
    sent: list[Message] = []
    assert _fire(store.side_tables, sent, T0 + timedelta(minutes=1)).outcome == PUBLISHED


@pytest.mark.parametrize("name", ["detector"])
def test_a_trigger_whose_task_is_not_built_records_it(store: SqlEventStore, name: str) -> None:
    sent: list[Message] = []
    for minute in range(2):
        fired = fire(
            name,
            store.side_tables,
            registered=set(app.tasks),
            publish=sent.append,
            now=T0 + timedelta(minutes=minute),
        )
        assert fired == Fired(name, NOT_BUILT)
    assert sent == []
    row = lock_rows(store.side_tables)[name]
    assert (row["runs"], row["not_built"], row["last_outcome"]) == (0, 2, NOT_BUILT)


def test_the_precheck_trigger_publishes_a_sweep_of_the_mining_tickets(store: SqlEventStore) -> None:
    import ouroboros_gates.workers.tasks  # noqa: F401  (registers every task, as a worker does)

    sent: list[Message] = []
    fired = fire("precheck", store.side_tables, registered=set(app.tasks), publish=sent.append, now=T0)
    assert fired.outcome == PUBLISHED
    assert len(sent) == 1 and isinstance(sent[0], PrecheckSweep) and sent[0].message_id == fired.message_id
    assert sent[0].TASK == TRIGGERS["precheck"].task == "prechecker.sweep"


def test_the_merge_train_trigger_publishes_a_run_of_the_train(store: SqlEventStore) -> None:
    import ouroboros_gates.workers.tasks  # noqa: F401  (registers every task, as a worker does)

    sent: list[Message] = []
    fired = fire("merge_train", store.side_tables, registered=set(app.tasks), publish=sent.append, now=T0)
    assert fired.outcome == PUBLISHED
    assert len(sent) == 1 and isinstance(sent[0], RunMergeTrain) and sent[0].message_id == fired.message_id
    assert sent[0].TASK == TRIGGERS["merge_train"].task == "merger.train"


def test_an_unknown_trigger_is_a_permanent_error(sqlite_url: str) -> None:
    side = SqlEventStore.from_url(sqlite_url).side_tables
    with pytest.raises(PermanentError, match="unknown trigger 'nightly'; known: detector, measure"):
        fire("nightly", side, registered=BUILT, publish=lambda _: None)


def test_beat_runs_each_trigger_through_fleet_trigger_in_los_angeles() -> None:
    schedule = app.conf.beat_schedule
    assert app.conf.timezone == "America/Los_Angeles"
    entries = {key: entry for key, entry in schedule.items() if entry["task"] == "fleet.trigger"}
    assert (
        {entry["args"][0] for entry in entries.values()}
        == set(TRIGGERS)
        == {"detector", "precheck", "measure", "merge_train"}
    )
    assert {t.task for t in TRIGGERS.values()} == {
        "miner.scan",
        "prechecker.sweep",
        "measurer.measure",
        "merger.train",
    }
    for entry in entries.values():
        trigger = TRIGGERS[entry["args"][0]]
        assert entry["schedule"] == trigger.schedule()
        assert entry["options"] == {"queue": "fleet", "expires": trigger.period_s}
        assert len(trigger.derived_from) > 40
    assert "fleet.trigger" in app.tasks


def _reference(minute: str, hour: str, after: datetime, count: int) -> list[datetime]:
    """Cron by brute force: every UTC minute whose local wall time matches, each wall time once (first
    fold)."""
    minutes = set(range(0, 60, int(minute[2:]))) if minute.startswith("*/") else {int(minute)}
    hours = set(range(24)) if hour == "*" else {int(hour)}
    found: list[datetime] = []
    moment = after.astimezone(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
    while len(found) < count:
        local = moment.astimezone(LA)
        if local.minute in minutes and local.hour in hours and not local.fold:
            found.append(local)
        moment += timedelta(minutes=1)
    return found


@pytest.mark.parametrize("name", sorted(TRIGGERS))
@pytest.mark.parametrize(
    "start", [datetime(2026, 3, 7, 22, 0, tzinfo=LA), datetime(2026, 10, 31, 22, 0, tzinfo=LA)]
)
def test_next_occurrences_across_dst_match_cron(name: str, start: datetime) -> None:
    trigger = TRIGGERS[name]
    count = {"detector": 60, "measure": 4}.get(name, 8)
    got = next_occurrences(trigger, start, count, LA)
    assert got == _reference(trigger.minute, trigger.hour, start, count)
    assert all(later > earlier for earlier, later in itertools.pairwise(got))


def test_next_occurrences_skip_the_missing_hour_and_fire_the_repeated_one_once() -> None:
    spring = next_occurrences(TRIGGERS["precheck"], datetime(2026, 3, 8, 0, 0, tzinfo=LA), 3, LA)
    assert [d.strftime("%H:%M%z") for d in spring] == ["00:20-0800", "01:20-0800", "03:20-0700"]
    fall = next_occurrences(TRIGGERS["precheck"], datetime(2026, 11, 1, 0, 0, tzinfo=LA), 3, LA)
    assert [d.strftime("%H:%M%z") for d in fall] == ["00:20-0700", "01:20-0700", "02:20-0800"]
    daily = next_occurrences(TRIGGERS["measure"], datetime(2026, 3, 7, 12, 0, tzinfo=LA), 3, LA)
    assert [d.isoformat() for d in daily] == [
        "2026-03-08T00:05:00-08:00",
        "2026-03-09T00:05:00-07:00",
        "2026-03-10T00:05:00-07:00",
    ]
    assert daily[1].astimezone(UTC) - daily[0].astimezone(UTC) == timedelta(
        hours=23
    )  # the spring-forward day is 23 hours long


def test_ouro_triggers_prints_next_occurrences_and_derivations(tmp_path: Path) -> None:
    env = {**os.environ, "OURO_STATE": str(tmp_path / "state"), "COLUMNS": "200"}
    env.pop("OURO_DATABASE_URL", None)
    run = [sys.executable, "-c", "from ouroboros_gates.ops.cli import main; main()", "triggers"]
    shown = subprocess.run(
        [*run, "--json", "-n", "2"], check=False, env=env, capture_output=True, text=True, timeout=120
    )
    assert shown.returncode == 0, shown.stderr
    plans = {p["name"]: p for p in json.loads(shown.stdout)}
    assert set(plans) == set(TRIGGERS)
    for name, item in plans.items():
        assert item["zone"] == "America/Los_Angeles" and len(item["next"]) == 2
        assert item["derived_from"] == TRIGGERS[name].derived_from and item["last"] is None
    assert all(datetime.fromisoformat(d).minute == 5 for d in plans["measure"]["next"])
    text = subprocess.run(run, check=False, env=env, capture_output=True, text=True, timeout=120)
    assert text.returncode == 0 and "cron '*/5 * * * *'" in text.stdout and "304 s" in text.stdout

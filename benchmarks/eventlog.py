"""Event-log benchmark: our ``SqlEventStore`` against the ``eventsourcing`` library, same database, same run.

Measured per backend (a SQLite file in a temporary folder, WAL and ``synchronous=NORMAL`` on both sides;
PostgreSQL in a fresh database ``ouro_bench_<pid>``, dropped afterwards):

1. appends/s, single: one event per transaction. Ours: ``SqlEventStore.commit`` of one ``ProbeCompleted``
   with a message id (duplicate check, position and stream version under the write lock, the event row, the
   handled-message row). Theirs: ``ProcessRecorder.insert_events`` of one ``StoredEvent`` whose state is the
   same event and metadata as JSON, with a ``Tracking`` row in the same transaction: the library's own
   idempotent append (what its process applications record for each notification they handle), under their
   writer lock. appends/s, plain: ours without a message id (no duplicate check, no handled row), theirs
   without tracking: an append and nothing else on both sides.
2. appends/s, batched: 100 events (10 streams of 10) per transaction, same work otherwise.
3. catch-up events/s over N ``RunRecorded`` events appended beforehand (only the catch-up is timed).
   Ours: ``events.projector.catch_up`` of the ``runs`` projection: per batch of 5000, one transaction
   that locks the checkpoint row, reads the events of its types, writes one ``ouro_runs`` row per event
   and moves the checkpoint. Theirs: pages of 5000 from ``select_notifications(topics=...)``, decoded
   and upserted one row per event into ``es_runs`` (same columns, same row function) with their
   tracking row in the same transaction (a ``TrackingRecorder`` subclass, their pattern for views).

The sides take turns, round by round, first one then the other, so a busy machine slows both alike;
appends are summed over 5 rounds, catch-up is the best of 3 folds from an empty table.

Run: ``.venv/bin/python benchmarks/eventlog.py [--events N] [--pg-url URL] [--skip-pg]``.
The last line printed is the summary of ratios (ours / theirs) and the SQLite catch-up rate.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from types import SimpleNamespace
from typing import Any, NamedTuple

import orjson
import psycopg
from _databases import fresh_pg_database
from _markdown import add_markdown_option, write_block
from eventsourcing import postgres as es_postgres
from eventsourcing import sqlite as es_sqlite
from eventsourcing.persistence import StoredEvent as TheirEvent
from eventsourcing.persistence import Tracking
from sqlalchemy import MetaData, delete, update
from sqlalchemy.engine import make_url
from sqlalchemy.schema import CreateTable

from ouroboros_gates.events import Metadata, SqlEventStore, StreamWrite, make_engine, upgrade
from ouroboros_gates.events.projections.runs import projection as runs_projection
from ouroboros_gates.events.projector import catch_up
from ouroboros_gates.events.tables import checkpoints
from ouroboros_gates.schemas import Event, ProbeCompleted, RunRecorded, RunSummary, Usage

BATCH = 100
PAGE = 5000
ROUNDS = 5
TRIALS = 3
TARGET_CATCH_UP = 50_000
LABELS = {
    "appends": "appends/s, 1 event/tx, idempotent",
    "plain": "appends/s, 1 event/tx, plain",
    "batched": f"appends/s, {BATCH} events/tx",
    "catch-up": "catch-up ev/s",
}
PRODUCER = "bench.eventlog"
RUN_TOPIC = "ouroboros_gates.schemas.events:RunRecorded"
ES_RUNS = runs_projection.table.to_metadata(MetaData(), name="es_runs")
COLUMNS = [column.name for column in ES_RUNS.columns]


class Measure(NamedTuple):
    """One line of the table."""

    backend: str
    key: str
    ours: float
    theirs: float


def _probes(n: int, tag: str) -> list[ProbeCompleted]:
    return [ProbeCompleted(probe=f"{tag}-{i}", hostname="worker-1", held_s=0.25 + i % 7) for i in range(n)]


def _runs(n: int) -> list[RunRecorded]:
    out = []
    for i in range(n):
        run = f"run-{i:07d}"
        usage = Usage(input_tokens=1200 + i, output_tokens=300, cache_read_input_tokens=9000)
        summary = RunSummary(
            run=run,
            lines=40 + i % 9,
            malformed=0,
            tool_calls=12,
            tool_errors=i % 3,
            usage=usage,
            cost_usd=0.02,
        )
        digest = hashlib.sha256(run.encode()).hexdigest()
        out.append(RunRecorded(run=run, path=f"{run}/events.jsonl", summary=summary, digest=digest))
    return out


def _chunks(events: Sequence[Event], size: int) -> Iterator[Sequence[Event]]:
    for start in range(0, len(events), size):
        yield events[start : start + size]


class Ours:
    """Our event store and the ``runs`` projection."""

    def __init__(self, store: SqlEventStore) -> None:
        self.store = store

    def single(self, events: Sequence[Event], tag: str) -> None:
        """One ``commit`` per event (streams of 10), each with its message id."""
        for i, event in enumerate(events):
            write = StreamWrite(f"probe/{tag}-{i // 10}", [event])
            self.store.commit([write], Metadata(producer=PRODUCER, message_id=f"{tag}-{i}"))

    def plain(self, events: Sequence[Event], tag: str) -> None:
        """One ``commit`` per event with no message id: the same work as their recorder's append."""
        for i, event in enumerate(events):
            self.store.commit([StreamWrite(f"probe/{tag}-{i // 10}", [event])], Metadata(producer=PRODUCER))

    def batched(self, events: Sequence[Event], tag: str) -> None:
        """One ``commit`` per 100 events: 10 streams of 10, one message id."""
        for j, chunk in enumerate(_chunks(events, BATCH)):
            writes = [StreamWrite(f"probe/{tag}-{j}-{k}", part) for k, part in enumerate(_chunks(chunk, 10))]
            self.store.commit(writes, Metadata(producer=PRODUCER, message_id=f"{tag}-{j}"))

    def catch_up(self) -> int:
        """Fold what the ``runs`` projection has not seen; the count folded."""
        return catch_up(self.store, [runs_projection])["runs"]

    def reset(self) -> None:
        """Empty the projection and rewind its checkpoint (what ``rebuild`` does before refolding)."""
        with self.store.writing() as conn:
            conn.execute(delete(runs_projection.table))
            conn.execute(update(checkpoints).where(checkpoints.c.projection == "runs").values(position=0))


class _SyncNormalPool(es_sqlite.SQLiteConnectionPool):
    """Their pool with ``synchronous=NORMAL``, our setting, so both sides promise the same durability."""

    def _create_connection(self) -> es_sqlite.SQLiteConnection:
        connection = super()._create_connection()
        connection._sqlite_conn.execute("PRAGMA synchronous=NORMAL")
        return connection


def _upsert_sql(mark: Callable[[str], str]) -> str:
    updates = ", ".join(f"{c}=excluded.{c}" for c in COLUMNS if c != "run")
    values = ", ".join(mark(c) for c in COLUMNS)
    return (
        f"INSERT INTO es_runs ({', '.join(COLUMNS)}) VALUES ({values}) ON CONFLICT (run) DO UPDATE SET "
        f"{updates}"
    )


class _RunsView:
    """``es_runs`` beside their tracking table: one upsert per event and the tracking row, in one
    transaction."""

    def upsert(self, rows: list[dict[str, Any]], tracking: Tracking) -> None:
        """Upsert one row per event and move the tracking row, atomically."""
        with self.datastore.transaction(commit=True) as cursor:  # type: ignore[attr-defined]
            cursor.executemany(self.upsert_sql, rows)  # type: ignore[attr-defined]
            self._insert_tracking(cursor, tracking)  # type: ignore[attr-defined]


class SqliteRunsView(_RunsView, es_sqlite.SQLiteTrackingRecorder):
    """The view on SQLite."""

    upsert_sql, tracking_table = _upsert_sql(lambda c: f":{c}"), "tracking"


class PostgresRunsView(_RunsView, es_postgres.PostgresTrackingRecorder):
    """The view on PostgreSQL."""

    upsert_sql, tracking_table = _upsert_sql(lambda c: f"%({c})s"), "notification_tracking"


def _stored(event: Event, stream: str, version: int, message_id: str) -> TheirEvent:
    meta = Metadata(producer=PRODUCER, message_id=message_id).as_dict()
    state = orjson.dumps({"payload": event.to_json_dict(), "meta": meta})
    return TheirEvent(stream, version, f"ouroboros_gates.schemas.events:{type(event).TYPE}", state)


class Theirs:
    """The ``eventsourcing`` process recorder (an application recorder with tracking), and a tracking
    recorder holding ``es_runs``."""

    def __init__(self, recorder: Any, view: Any) -> None:
        self.recorder, self.view = recorder, view
        self.handled = 0  # the tracking position of their idempotent appends

    def single(self, events: Sequence[Event], tag: str) -> None:
        """One ``insert_events`` per event (streams of 10), each with its tracking row."""
        for i, event in enumerate(events):
            self.handled += 1
            stored = _stored(event, f"probe/{tag}-{i // 10}", i % 10 + 1, f"{tag}-{i}")
            self.recorder.insert_events([stored], tracking=Tracking(PRODUCER, self.handled))

    def plain(self, events: Sequence[Event], tag: str) -> None:
        """One ``insert_events`` per event (streams of 10), no tracking."""
        for i, event in enumerate(events):
            self.recorder.insert_events([_stored(event, f"probe/{tag}-{i // 10}", i % 10 + 1, f"{tag}-{i}")])

    def batched(self, events: Sequence[Event], tag: str) -> None:
        """One ``insert_events`` per 100 events: 10 streams of 10."""
        for j, chunk in enumerate(_chunks(events, BATCH)):
            stored = [
                _stored(e, f"probe/{tag}-{j}-{k // 10}", k % 10 + 1, f"{tag}-{j}")
                for k, e in enumerate(chunk)
            ]
            self.recorder.insert_events(stored)

    def catch_up(self) -> int:
        """Pages of notifications, decoded and upserted with the tracking row; the count folded."""
        row_of: Any = runs_projection.rows["RunRecorded"]  # it reads only .payload and .position
        start, done = self.view.max_tracking_id("runs") or 0, 0
        while page := self.recorder.select_notifications(
            start, PAGE, topics=[RUN_TOPIC], inclusive_of_start=False
        ):
            rows = [
                row_of(SimpleNamespace(payload=orjson.loads(n.state)["payload"], position=n.id)) for n in page
            ]
            self.view.upsert(rows, Tracking("runs", page[-1].id))
            start, done = page[-1].id, done + len(page)
        return done

    def reset(self) -> None:
        """Empty ``es_runs`` and drop the tracking row."""
        with self.view.datastore.transaction(commit=True) as c:
            c.execute("DELETE FROM es_runs")
            c.execute(f"DELETE FROM {self.view.tracking_table} WHERE application_name = 'runs'")


def _timed(work: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = work(*args)
    return time.perf_counter() - started, result


def _measure(backend: str, ours: Ours, theirs: Theirs, n: int) -> list[Measure]:
    """Interleave the sides round by round (who goes first alternates) so a busy machine hurts both alike."""
    for side in (ours, theirs):
        side.batched(_probes(BATCH, "warm"), "warm")  # compile caches, open connections
    results = []
    for key, method in (("appends", "single"), ("plain", "plain"), ("batched", "batched")):
        spent = {"ours": 0.0, "theirs": 0.0}
        for r in range(ROUNDS):
            events = _probes(n // ROUNDS, f"{key}{r}")
            for name, side in (("ours", ours), ("theirs", theirs))[:: 1 if r % 2 == 0 else -1]:
                spent[name] += _timed(getattr(side, method), events, f"{key}{r}")[0]
        results.append(Measure(backend, key, n / spent["ours"], n / spent["theirs"]))
    for side in (ours, theirs):
        side.batched(_runs(n), "run")
    best = {"ours": 0.0, "theirs": 0.0}  # the best of a few catch-ups from scratch
    for trial in range(TRIALS):
        for name, side in (("ours", ours), ("theirs", theirs))[:: 1 if trial % 2 == 0 else -1]:
            side.reset()
            seconds, folded = _timed(side.catch_up)
            if folded != n:
                raise SystemExit(f"benchmark broken: {name} folded {folded} of {n} events")
            best[name] = max(best[name], n / seconds)
    results.append(Measure(backend, "catch-up", best["ours"], best["theirs"]))
    return results


def _their_tables(recorder_class: Any, view_class: Any, datastore: Any, dialect: Any) -> Theirs:
    recorder, view = recorder_class(datastore), view_class(datastore)
    recorder.create_table()
    view.create_table()
    with datastore.transaction(commit=True) as cursor:
        cursor.execute(str(CreateTable(ES_RUNS).compile(dialect=dialect)))
    return Theirs(recorder, view)


def run_sqlite(n: int) -> list[Measure]:
    """Both sides on SQLite files in one temporary folder."""
    with tempfile.TemporaryDirectory(prefix="ouro_bench_") as folder:
        engine = make_engine(f"sqlite:///{folder}/ours.sqlite")
        upgrade(engine)
        datastore = es_sqlite.SQLiteDatastore(f"{folder}/theirs.sqlite", originator_id_type="text")
        datastore.pool = _SyncNormalPool(db_name=datastore.pool.db_name)
        theirs = _their_tables(es_sqlite.SQLiteProcessRecorder, SqliteRunsView, datastore, engine.dialect)
        try:
            return _measure("sqlite", Ours(SqlEventStore(engine)), theirs, n)
        finally:
            engine.dispose()
            datastore.close()


def run_postgres(n: int, url: str) -> list[Measure]:
    """Both sides in one fresh PostgreSQL database (their tables and ours do not share names)."""
    with fresh_pg_database(url, "eventlog") as bench_url:
        engine = make_engine(bench_url)
        upgrade(engine)
        at = make_url(bench_url)
        datastore = es_postgres.PostgresDatastore(
            str(at.database),
            at.host or "127.0.0.1",
            at.port or 5432,
            at.username or "postgres",
            at.password or "",
            originator_id_type="text",
        )
        theirs = _their_tables(
            es_postgres.PostgresProcessRecorder, PostgresRunsView, datastore, engine.dialect
        )
        try:
            return _measure("postgres", Ours(SqlEventStore(engine)), theirs, n)
        finally:
            engine.dispose()
            datastore.close()


def _rows(results: list[Measure]) -> list[list[str]]:
    return [
        [r.backend, LABELS[r.key], f"{r.ours:,.0f}", f"{r.theirs:,.0f}", f"{r.ours / r.theirs:.2f}x"]
        for r in results
    ]


HEADER = ["backend", "measure", "ours / s", "eventsourcing / s", "ratio"]


def _report(results: list[Measure]) -> str:
    print(f"{'backend':<9} {'measure':<28} {'ours/s':>10} {'theirs/s':>10} {'ours/theirs':>12}")
    for r in results:
        print(
            f"{r.backend:<9} {LABELS[r.key]:<28} {r.ours:>10.0f} {r.theirs:>10.0f} "
            f"{r.ours / r.theirs:>11.2f}x"
        )
    ratios = [
        f"{r.key} {r.backend} {r.ours / r.theirs:.2f}x" for key in LABELS for r in results if r.key == key
    ]
    lite = next((r.ours for r in results if r.backend == "sqlite" and r.key == "catch-up"), 0.0)
    return (
        f"ratio ours/eventsourcing: {', '.join(ratios)}; "
        f"catch-up sqlite {lite:.0f} ev/s (target >= {TARGET_CATCH_UP})"
    )


def main(argv: list[str] | None = None) -> int:
    """Run every measure and print the table, then the summary line last."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000, help="events per measure (default 5000)")
    parser.add_argument(
        "--pg-url",
        default="postgresql+psycopg://postgres@127.0.0.1:5432/test",
        help="a PostgreSQL server (a fresh database is created on it and dropped)",
    )
    parser.add_argument("--skip-pg", action="store_true", help="measure SQLite only")
    add_markdown_option(parser)
    args = parser.parse_args(argv)
    n = max(BATCH * ROUNDS, args.events // (BATCH * ROUNDS) * BATCH * ROUNDS)
    print(__doc__.split("\n\nRun:")[0].split("\n\n", 1)[1])
    print(f"\nevents per measure: {n}; batch {BATCH}; catch-up page {PAGE}\n")
    results = run_sqlite(n)
    if args.skip_pg:
        print("postgres: skipped (--skip-pg)")
    else:
        try:
            results += run_postgres(n, args.pg_url)
        except psycopg.OperationalError as exc:
            print(f"postgres: skipped, server unreachable at {args.pg_url}: {' '.join(str(exc).split())}")
    last = _report(results)
    write_block(args.markdown, "eventlog", HEADER, _rows(results), last)
    print(last)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

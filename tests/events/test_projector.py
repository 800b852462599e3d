"""The projection runner: checkpoints with rows, no skip and no double apply under concurrent writers,
and a rebuild that refolds to identical tables."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from sqlalchemy import BigInteger, Column, Connection, MetaData, String, Table, func, insert, select

from ouroboros_gates.events import Metadata, SqlEventStore, StreamWrite, ensure_schema
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import catch_up, digest, rebuild, status
from ouroboros_gates.schemas import ProbeCompleted, RunRecorded, RunSummary, Usage

_meta = MetaData()
applied = Table(
    "test_applied",
    _meta,
    Column("position", BigInteger, primary_key=True, autoincrement=False),
    Column("stream", String(100), nullable=False),
)


class InsertOnly:
    """A projection that inserts one row per event: a double apply is an integrity error."""

    name = "test_applied"
    tables = (applied,)
    types = frozenset({"ProbeCompleted"})

    def apply(self, conn: Connection, event: object) -> None:
        conn.execute(insert(applied).values(position=event.position, stream=event.stream))  # type: ignore[attr-defined]


def _run_event(n: int) -> RunRecorded:
    summary = RunSummary(
        run=f"run-{n % 12:04d}",
        lines=10 + n,
        malformed=0,
        tool_calls=n,
        tool_errors=n % 3,
        usage=Usage(input_tokens=n, cache_read_input_tokens=10 * n),
        cost_usd=0.01 * n,
        started_at=datetime(2026, 10, 1, tzinfo=UTC),
    )
    return RunRecorded(
        run=summary.run, path=f"/runs/{summary.run}/events.jsonl", summary=summary, digest="a" * 64
    )


@pytest.mark.integration
def test_eight_writers_and_a_concurrent_projection_skip_nothing(pg_url: str) -> None:
    store = SqlEventStore.from_url(pg_url)
    ensure_schema(store.engine)
    _meta.create_all(store.engine)
    writers, per_writer = 8, 40
    stop = threading.Event()
    errors: list[BaseException] = []

    def write(w: int) -> None:
        own = SqlEventStore.from_url(pg_url)
        try:
            for i in range(per_writer):
                own.commit(
                    [StreamWrite(f"w/{w}", [ProbeCompleted(probe=f"{w}-{i}", hostname="t", held_s=0)])],
                    Metadata("test", message_id=f"msg-{w}-{i:04d}"),
                )
        except BaseException as exc:
            errors.append(exc)
        finally:
            own.engine.dispose()

    def project() -> None:
        own = SqlEventStore.from_url(pg_url)
        try:
            while not stop.is_set():
                catch_up(own, [InsertOnly()], batch=7)
        except BaseException as exc:
            errors.append(exc)
        finally:
            own.engine.dispose()

    projector = threading.Thread(target=project)
    projector.start()
    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    projector.join()
    assert not errors, errors
    catch_up(store, [InsertOnly()])
    total = writers * per_writer
    with store.reading() as conn:
        positions = [row[0] for row in conn.execute(select(applied.c.position).order_by(applied.c.position))]
        per_stream = dict(
            conn.execute(select(applied.c.stream, func.count()).group_by(applied.c.stream)).all()
        )
    assert positions == list(range(1, total + 1))
    assert per_stream == {f"w/{w}": per_writer for w in range(writers)}
    assert [e.version for e in store.read_stream("w/3")] == list(range(1, per_writer + 1))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_rebuild_refolds_to_identical_tables(backend: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    store = SqlEventStore.from_url(url)
    ensure_schema(store.engine)
    for n in range(30):
        store.commit([StreamWrite(f"run/run-{n % 12:04d}", [_run_event(n)])], Metadata("t"))
    catch_up(store, PROJECTIONS, batch=4)
    before = digest(store, PROJECTIONS)
    rebuild(store, PROJECTIONS)
    assert digest(store, PROJECTIONS) == before
    runs = next(s for s in status(store, PROJECTIONS) if s.name == "runs")
    assert runs.rows == 12 and runs.lag == 0 and runs.position == 30


def test_checkpoint_moves_with_rows_and_resumes(sqlite_url: str) -> None:
    store = SqlEventStore.from_url(sqlite_url)
    ensure_schema(store.engine)
    _meta.create_all(store.engine)
    for n in range(10):
        store.commit(
            [StreamWrite("p", [ProbeCompleted(probe=str(n), hostname="t", held_s=0)])], Metadata("t")
        )
    assert catch_up(store, [InsertOnly()], batch=3) == {"test_applied": 10}
    assert catch_up(store, [InsertOnly()]) == {"test_applied": 0}  # nothing applied twice
    store.commit([StreamWrite("p", [ProbeCompleted(probe="late", hostname="t", held_s=0)])], Metadata("t"))
    assert catch_up(store, [InsertOnly()]) == {"test_applied": 1}

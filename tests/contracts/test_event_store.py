"""One contract suite, run against every event-store backend: memory, SQLite, PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy

from ouroboros_gates.events import (
    DEAD_LETTER,
    REJECTED,
    ConcurrencyError,
    EventStore,
    MemoryEventStore,
    Metadata,
    SqlEventStore,
    StreamWrite,
    ensure_schema,
    iter_all,
)
from ouroboros_gates.events.sql import normalise_url
from ouroboros_gates.schemas import Probe, ProbeCompleted


def _event(n: int) -> ProbeCompleted:
    return ProbeCompleted(probe=f"p{n}", hostname="test", held_s=0.0)


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def store(request: pytest.FixtureRequest) -> Iterator[EventStore]:
    if request.param == "memory":
        yield MemoryEventStore()
        return
    url = request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url")
    sql = SqlEventStore.from_url(url)
    ensure_schema(sql.engine)
    yield sql
    sql.engine.dispose()


def test_positions_are_gapless_and_versions_per_stream(store: EventStore) -> None:
    store.commit([StreamWrite("a", [_event(1), _event(2)])], Metadata("t"))
    store.commit([StreamWrite("b", [_event(3)]), StreamWrite("a", [_event(4)])], Metadata("t"))
    events = list(iter_all(store))
    assert [e.position for e in events] == [1, 2, 3, 4]
    assert [(e.stream, e.version) for e in events] == [("a", 1), ("a", 2), ("b", 1), ("a", 3)]
    assert [e.payload["probe"] for e in store.read_stream("a")] == ["p1", "p2", "p4"]
    assert store.head() == 4


def test_append_is_idempotent_on_message_id(store: EventStore) -> None:
    meta = Metadata("miner.ingest", message_id="m-0000001")
    first = store.commit([StreamWrite("a", [_event(1)])], meta)
    again = store.commit([StreamWrite("a", [_event(1)])], meta)
    assert first.positions == (1,) and not first.duplicate
    assert again.duplicate and again.positions == ()
    assert store.head() == 1
    assert store.is_handled("miner.ingest", "m-0000001")
    assert not store.is_handled("other", "m-0000001")


def test_optimistic_concurrency_names_stream_and_versions(store: EventStore) -> None:
    store.commit([StreamWrite("s", [_event(1)])], Metadata("t"))
    with pytest.raises(ConcurrencyError) as caught:
        store.commit([StreamWrite("s", [_event(2)], expected_version=0)], Metadata("t"))
    assert "'s'" in str(caught.value) and "expected version 0" in str(caught.value)
    assert "actual version 1" in str(caught.value)
    assert store.head() == 1  # nothing of the failed write remains


def test_failed_write_rolls_back_every_stream(store: EventStore) -> None:
    store.commit([StreamWrite("x", [_event(1)])], Metadata("t"))
    with pytest.raises(ConcurrencyError):
        store.commit(
            [StreamWrite("y", [_event(2)]), StreamWrite("x", [_event(3)], expected_version=5)],
            Metadata("t", message_id="m-rollback"),
        )
    assert store.read_stream("y") == []
    assert not store.is_handled("t", "m-rollback")


def test_outbox_entries_commit_with_events_and_dedupe(store: EventStore) -> None:
    follow = Probe(message_id="follow-0001", probe="next")
    store.commit([StreamWrite("a", [_event(1)])], Metadata("t", message_id="m-1"), outbox=[follow])
    store.commit([StreamWrite("a", [_event(2)])], Metadata("t", message_id="m-2"), outbox=[follow])
    pending = store.pending_outbox()
    assert [e.message_id for e in pending] == ["follow-0001"]
    assert pending[0].task == "fleet.probe" and pending[0].payload["probe"] == "next"
    store.mark_published(pending[0].id, error="broker down")
    assert [e.message_id for e in store.pending_outbox()] == ["follow-0001"]
    store.mark_published(pending[0].id)
    assert store.pending_outbox() == []


def test_a_commit_returns_the_entries_it_queued_and_several_are_marked_published_at_once(
    store: EventStore,
) -> None:
    first, second = Probe(message_id="follow-0002", probe="a"), Probe(message_id="follow-0003", probe="b")
    queued = store.commit([], Metadata("t", message_id="m-3"), outbox=[first, second]).outbox
    assert [(e.message_id, e.task, e.payload["probe"]) for e in queued] == [
        ("follow-0002", "fleet.probe", "a"),
        ("follow-0003", "fleet.probe", "b"),
    ]
    again = store.commit([], Metadata("t", message_id="m-4"), outbox=[first]).outbox
    assert again == ()  # queued already, by its message id
    store.mark_all_published([e.id for e in queued])
    assert store.pending_outbox() == []


@pytest.mark.parametrize("consumer", ["fleet.probe", "fleet.probe" + REJECTED, DEAD_LETTER])
def test_a_message_is_settled_when_handled_rejected_or_dead_lettered(
    store: EventStore, consumer: str
) -> None:
    assert not store.is_settled("fleet.probe", "m-settle")
    store.commit([], Metadata("other.task", message_id="m-settle"))
    assert not store.is_settled("fleet.probe", "m-settle")  # another task's record settles nothing here
    store.commit([], Metadata(consumer, message_id="m-settle"))
    assert store.is_settled("fleet.probe", "m-settle")


def test_duplicate_message_queues_no_outbox_entry(store: EventStore) -> None:
    meta = Metadata("t", message_id="m-dup-outbox")
    store.commit([StreamWrite("a", [_event(1)])], meta)
    store.commit([StreamWrite("a", [_event(1)])], meta, outbox=[Probe(message_id="never-0001", probe="x")])
    assert store.pending_outbox() == []


def test_read_pages_and_decodes(store: EventStore) -> None:
    for n in range(25):
        store.commit([StreamWrite(f"s{n % 3}", [_event(n)])], Metadata("t"))
    page = store.read(after=10, limit=5)
    assert [e.position for e in page] == [11, 12, 13, 14, 15]
    decoded = page[0].decode()
    assert isinstance(decoded, ProbeCompleted) and decoded.probe == "p10"
    assert len(list(iter_all(store, batch=7))) == 25


@pytest.mark.parametrize("made_by", ["make_engine", "create_engine"])
def test_the_writer_connection_leaves_no_autocommit_behind_in_the_pool(pg_url: str, made_by: str) -> None:
    """On PostgreSQL the writer's connection runs in autocommit; back in the pool it must hold transactions
    again, or a ``writing()`` that reuses it would run its lock outside one (whoever made the engine)."""
    if made_by == "make_engine":
        sql = SqlEventStore.from_url(pg_url)
    else:
        sql = SqlEventStore(sqlalchemy.create_engine(normalise_url(pg_url), pool_size=1))
    ensure_schema(sql.engine)
    try:
        sql.commit([StreamWrite("a", [_event(1)])], Metadata("t", message_id="m-pool-1"))
        writer = sql._local.connection
        sql._local.connection = None
        writer.close()  # back to the pool, as when the writer's thread lets it go
        pool: Any = sql.engine.pool
        assert pool.checkedin() == 1
        with sql.writing() as conn:  # takes that connection: LOCK TABLE needs a transaction block
            driver: Any = conn.connection.driver_connection
            assert not driver.autocommit
        sql.commit([StreamWrite("a", [_event(2)])], Metadata("t", message_id="m-pool-2"))
        assert [e.version for e in sql.read_stream("a")] == [1, 2]
    finally:
        sql.close()


def test_an_append_that_waits_for_a_held_position_lock_fails_as_transient_after_the_lock_timeout(
    pg_url: str,
) -> None:
    """A session that takes the position lock and hangs stalls no writer for ever: the append gives up after
    the lock timeout (60 s by default; the URL's own ``options`` here, 0.3 s) as an error the worker
    retries."""
    import psycopg

    from ouroboros_gates.schemas.errors import TransientError

    default = SqlEventStore.from_url(pg_url)
    ensure_schema(default.engine)
    with default.reading() as conn:
        assert conn.exec_driver_sql("SHOW lock_timeout").scalar() == "1min"
    default.close()
    sql = SqlEventStore.from_url(pg_url + "?options=-c%20lock_timeout%3D300")
    holder = psycopg.connect(normalise_url(pg_url).replace("postgresql+psycopg://", "postgresql://"))
    try:
        holder.execute("LOCK TABLE ouro_events IN EXCLUSIVE MODE")  # held: the transaction stays open
        with pytest.raises(TransientError, match="lock timeout"):
            sql.commit([StreamWrite("a", [_event(1)])], Metadata("t", message_id="m-lock-1"))
        holder.rollback()
        sql.commit(
            [StreamWrite("a", [_event(1)])], Metadata("t", message_id="m-lock-1")
        )  # the retry goes through
        assert [e.version for e in sql.read_stream("a")] == [1]
    finally:
        holder.close()
        sql.close()


def test_every_store_hands_out_its_side_tables_with_the_budget_in_them(store: EventStore) -> None:
    from datetime import UTC, datetime

    from ouroboros_gates.events.budget import Budget

    side = store.side_tables
    assert store.side_tables is side  # one handle per store
    budget = Budget(side, cap_usd=5.0)
    noon = datetime(2026, 10, 5, 19, 0, tzinfo=UTC)
    assert budget.reserve(7, 3.0, noon).granted
    assert not budget.reserve(7, 1.0, noon).granted  # one session per ticket
    assert "would pass the cap" in budget.reserve(8, 2.5, noon).reason
    store.commit([StreamWrite("a", [_event(1)])], Metadata("t"))  # the log moves; the side tables do not
    assert budget.settle(7, 1.0).charged_usd == 1.0
    assert budget.day_totals("2026-10-05") == (0.0, 1.0)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_rebuild_of_the_ledger_leaves_the_side_tables_as_they_were(
    backend: str, request: pytest.FixtureRequest
) -> None:
    from datetime import UTC, datetime

    from ouroboros_gates.events.budget import Budget
    from ouroboros_gates.events.projections import PROJECTIONS
    from ouroboros_gates.events.projector import rebuild

    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    sql = SqlEventStore.from_url(url)
    ensure_schema(sql.engine)
    budget = Budget(sql.side_tables, cap_usd=5.0)
    assert budget.reserve(3, 2.0, datetime(2026, 10, 5, 19, 0, tzinfo=UTC)).granted
    rebuild(sql, PROJECTIONS)
    assert budget.day_totals("2026-10-05") == (2.0, 0.0)  # not a projection: nothing refolds it
    sql.close()

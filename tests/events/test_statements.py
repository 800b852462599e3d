"""The driver-level statements are generated from the table definitions: every column of a table they write is
written, their marks take the parameters in the order their callers give them, and a projection's batch
upsert leaves the rows its one-by-one apply leaves."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, select

from ouroboros_gates.events import StoredEvent, statements
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projections.base import RowProjection
from ouroboros_gates.events.sqlwrite import RawWriter

DIALECTS = ("sqlite", "postgresql")


def test_an_appended_event_and_its_handled_row_give_every_column_of_their_tables() -> None:
    assert tuple(column.name for column in t.events.columns) == statements.EVENT_ROW
    assert tuple(column.name for column in t.handled_messages.columns) == statements.HANDLED_ROW


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_writer_s_statements_take_their_parameters_in_its_order(dialect: str) -> None:
    writer = RawWriter(dialect)  # refuses to be built when a statement's marks are in another order
    mark = "%s" if dialect == "postgresql" else "?"
    assert writer.sql["event"].startswith(f"INSERT INTO {t.events.name} ({', '.join(statements.EVENT_ROW)})")
    assert writer.sql["event"].count(mark) == len(statements.EVENT_ROW)
    with pytest.raises(TypeError, match="the caller gives b, a"):
        statements.positional(("a", "b"), ("b", "a"))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_projection_table_has_an_upsert_by_its_key(dialect: str) -> None:
    for projection in PROJECTIONS:
        for table in projection.tables:
            upsert = statements.upsert(table, dialect)
            assert upsert.names == tuple(column.name for column in table.columns)
            key = ", ".join(column.name for column in table.primary_key.columns)
            assert f"ON CONFLICT ({key}) DO" in upsert.sql


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_batch_read_names_its_types_and_its_bounds(dialect: str) -> None:
    batch = statements.event_range(dialect, 3, until=True)
    assert batch.names == ("after", "upto", "type_0", "type_1", "type_2", "until", "limit")
    assert statements.event_range(dialect, 3, until=False).names[-1] == "limit"


def _event(position: int, key: str, value: str) -> StoredEvent:
    payload = {"schema_version": 1, "probe": key, "hostname": value, "held_s": 0.0}
    return StoredEvent(
        position, "probe/x", position, "ProbeCompleted", 1, payload, {}, datetime(2026, 1, 1, tzinfo=UTC)
    )


def test_a_batch_upsert_leaves_what_one_by_one_leaves() -> None:
    table = Table(
        "t_probe",
        MetaData(),
        Column("probe", String, primary_key=True),
        Column("host", String),
        Column("position", Integer),
    )

    def row(event: StoredEvent) -> dict[str, object]:
        return {
            "probe": event.payload["probe"],
            "host": event.payload["hostname"],
            "position": event.position,
        }

    projection = RowProjection("probe", table, {"ProbeCompleted": row})
    events = [_event(1, "a", "h1"), _event(2, "b", "h2"), _event(3, "a", "h3")]
    engine = create_engine("sqlite://")
    table.create(engine)
    with engine.begin() as conn:
        projection.apply_many(conn, events)
        batched = conn.execute(select(table).order_by(table.c.probe)).all()
        conn.execute(table.delete())
        for event in events:
            projection.apply(conn, event)
        assert (
            conn.execute(select(table).order_by(table.c.probe)).all()
            == batched
            == [("a", "h3", 3), ("b", "h2", 2)]
        )

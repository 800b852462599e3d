"""The one decoding of a stored event: its type's class, the named upcasters from the version it was stored
at, validation; an unknown type, a newer version or a payload its class refuses is a typed error naming where
the event lies, never a bare KeyError; a projection folds the payload its class reads today."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import Field
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, select

from ouroboros_gates.events import (
    Metadata,
    SqlEventStore,
    StoredEvent,
    StreamWrite,
    UndecodableEvent,
    UnknownEventType,
    UnknownSchemaVersion,
    ensure_schema,
)
from ouroboros_gates.events.projections.base import RowProjection
from ouroboros_gates.schemas import EVENT_TYPES, Event, ProbeCompleted, RunRecorded
from ouroboros_gates.schemas.errors import PermanentError


def _stored(type_name: str, payload: dict[str, Any], version: int = 1, position: int = 7) -> StoredEvent:
    return StoredEvent(
        position, "probe/a", 3, type_name, version, payload, {}, datetime(2026, 1, 2, tzinfo=UTC)
    )


PROBE = {"schema_version": 1, "probe": "p", "hostname": "h", "held_s": 0.5}


class _Renamed(Event):
    """A test event at version 3: ``hold`` was ``held_s`` (v1), then ``host`` was ``hostname`` (v2)."""

    TYPE: ClassVar[str] = "TestRenamed"
    SCHEMA_VERSION: ClassVar[int] = 3

    schema_version: int = Field(default=3, ge=1)
    probe: str
    host: str
    hold: float

    @staticmethod
    def upcast_v1_v2(payload: dict[str, Any]) -> dict[str, Any]:
        body = dict(payload)
        body["hold"] = body.pop("held_s")
        return body

    @staticmethod
    def upcast_v2_v3(payload: dict[str, Any]) -> dict[str, Any]:
        body = dict(payload)
        body["host"] = body.pop("hostname")
        return body


@pytest.fixture
def renamed() -> Iterator[type[_Renamed]]:
    assert EVENT_TYPES["TestRenamed"] is _Renamed
    yield _Renamed


@pytest.fixture(scope="module", autouse=True)
def _unregister() -> Iterator[None]:
    yield
    EVENT_TYPES.pop("TestRenamed", None)  # the contract's registry holds only the product's events


def test_a_stored_event_decodes_into_its_class() -> None:
    event = _stored("ProbeCompleted", PROBE).decode()
    assert event == ProbeCompleted(probe="p", hostname="h", held_s=0.5)
    assert _stored("ProbeCompleted", PROBE).decode_as(ProbeCompleted).held_s == 0.5


def test_an_unknown_type_is_a_typed_error_naming_where_and_close_names() -> None:
    with pytest.raises(UnknownEventType) as caught:
        _stored("ProbeComplete", PROBE).decode()
    assert isinstance(caught.value, PermanentError)
    assert str(caught.value).startswith("event 7 ('probe/a' version 3): unknown event type 'ProbeComplete'")
    assert "close names: ProbeCompleted" in str(caught.value)


def test_a_newer_schema_version_is_a_typed_error() -> None:
    with pytest.raises(UnknownSchemaVersion, match=r"^event 7 .*ProbeCompleted payload is schema_version 2"):
        _stored("ProbeCompleted", PROBE | {"schema_version": 2}, version=2).decode()
    with pytest.raises(UnknownSchemaVersion):
        _stored("ProbeCompleted", PROBE, version=2).upcast()  # the stored column is the version read


def test_a_payload_its_class_refuses_names_the_event_and_the_field() -> None:
    with pytest.raises(UndecodableEvent) as caught:
        _stored("ProbeCompleted", PROBE | {"held_s": "long"}).decode()
    assert isinstance(caught.value, PermanentError)
    assert str(caught.value).startswith(
        "event 7 ('probe/a' version 3): ProbeCompleted payload refused: held_s: "
    )
    with pytest.raises(UndecodableEvent, match=r"a ProbeCompleted, read as a RunRecorded"):
        _stored("ProbeCompleted", PROBE).decode_as(RunRecorded)


def test_an_old_version_comes_up_through_each_named_upcaster(renamed: type[_Renamed]) -> None:
    old = _stored("TestRenamed", PROBE, version=1)
    assert old.decode() == renamed(probe="p", host="h", hold=0.5)
    current = old.upcast()
    assert current.schema_version == 3
    assert current.payload == {"schema_version": 3, "probe": "p", "host": "h", "hold": 0.5}
    assert old.payload == PROBE  # the stored form is left as it was read
    middle = _stored(
        "TestRenamed", {"schema_version": 2, "probe": "p", "hostname": "h", "hold": 0.5}, version=2
    )
    assert middle.decode() == renamed(probe="p", host="h", hold=0.5)
    now = _stored("TestRenamed", renamed(probe="p", host="h", hold=0.5).to_json_dict(), version=3)
    assert now.upcast() is now


def test_an_event_class_declares_its_upcasters_and_its_version() -> None:
    with pytest.raises(TypeError, match="at schema_version 2: declare upcast_v1_v2"):

        class _NoUpcaster(Event):
            TYPE: ClassVar[str] = "TestNoUpcaster"
            SCHEMA_VERSION: ClassVar[int] = 2
            schema_version: int = 2

    with pytest.raises(TypeError, match="its schema_version field must default to 2"):

        class _StaleDefault(Event):
            TYPE: ClassVar[str] = "TestStaleDefault"
            SCHEMA_VERSION: ClassVar[int] = 2

            @staticmethod
            def upcast_v1_v2(payload: dict[str, Any]) -> dict[str, Any]:
                return payload

    assert "TestNoUpcaster" not in EVENT_TYPES and "TestStaleDefault" not in EVENT_TYPES


def test_the_log_reads_back_an_old_version_through_its_upcasters(
    tmp_path: Path, renamed: type[_Renamed]
) -> None:
    store = SqlEventStore.from_url(f"sqlite:///{tmp_path / 'events.sqlite'}")
    ensure_schema(store.engine)
    old = ProbeCompleted(probe="p", hostname="h", held_s=0.5)  # the same fields as TestRenamed's version 1
    store.commit([StreamWrite("probe/a", [old])], Metadata("test"))
    with store.writing() as conn:
        conn.exec_driver_sql("UPDATE ouro_events SET type = 'TestRenamed'")
    [stored] = store.read_stream("probe/a")
    assert stored.schema_version == 1 and stored.decode() == renamed(probe="p", host="h", hold=0.5)
    store.close()


def test_a_projection_folds_the_payload_its_class_reads_today(renamed: type[_Renamed]) -> None:
    table = Table(
        "t_renamed",
        MetaData(),
        Column("probe", String, primary_key=True),
        Column("host", String),
        Column("position", Integer),
    )
    rows = {
        "TestRenamed": lambda e: {
            "probe": e.payload["probe"],
            "host": e.payload["host"],
            "position": e.position,
        }
    }
    projection = RowProjection("renamed", table, rows)
    engine = create_engine("sqlite://")
    table.create(engine)
    with engine.begin() as conn:
        projection.apply_many(conn, [_stored("TestRenamed", PROBE, version=1, position=4)])
        projection.apply(conn, _stored("TestRenamed", {**PROBE, "probe": "q"}, version=1, position=5))
        assert conn.execute(select(table).order_by(table.c.probe)).all() == [("p", "h", 4), ("q", "h", 5)]

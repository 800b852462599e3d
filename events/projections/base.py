"""A projection that maps each event of its types to one row of one table (upserted by key).

A row is made from the event's stored JSON form as its class reads it today (``StoredEvent.upcast``: the
version check and named upcasters of the one decoding), not from the validated model: the model costs
about as much again as the rest of a fold, and the log's own writer validated every payload it stored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

import orjson
from sqlalchemy import JSON, Connection, Table, and_, delete, insert

from ouroboros_gates.events import statements
from ouroboros_gates.events.store import StoredEvent

__all__ = ["RowProjection", "iso"]

RowMaker = Callable[[StoredEvent], dict[str, Any]]


def iso(value: str | datetime | None) -> str | None:
    """Timestamps are kept as the ISO text the event carries, so a rebuild is byte-identical."""
    if value is None or isinstance(value, str):
        return value
    return value.isoformat()


@dataclass(frozen=True)
class RowProjection:
    """Folds events of the mapped types into ``table``, one upserted row per event."""

    name: str
    table: Table
    rows: Mapping[str, RowMaker]

    @property
    def tables(self) -> tuple[Table, ...]:
        """The tables it owns."""
        return (self.table,)

    @property
    def types(self) -> frozenset[str]:
        """The event types it folds."""
        return frozenset(self.rows)

    def apply(self, conn: Connection, event: StoredEvent) -> None:
        """Replace the row with this key by the one the event implies."""
        row = self.rows[event.type](event.upcast())
        key = [column == row[column.name] for column in self.table.primary_key.columns]
        conn.execute(delete(self.table).where(and_(*key)))
        conn.execute(insert(self.table).values(**row))

    def apply_many(self, conn: Connection, events: Sequence[StoredEvent]) -> None:
        """``apply`` for each event in order, as one upsert per batch instead of a delete and an insert per
        event.

        The upsert runs on the driver's cursor, inside the caller's transaction: SQLAlchemy's per-row
        parameter processing cost more than the database's work.
        """
        dialect = conn.dialect.name
        if dialect not in ("sqlite", "postgresql"):  # no upsert there: one by one
            for event in events:
                self.apply(conn, event)
            return
        upsert = statements.upsert(self.table, dialect)
        key = [column.name for column in self.table.primary_key.columns]
        latest: dict[tuple[Any, ...], dict[str, Any]] = {}
        for event in events:
            row = self.rows[event.type](event.upcast())
            latest[tuple(row[name] for name in key)] = row  # the last event for a key wins, as one by one
        json_names = _json_columns(self.table)
        params = [
            tuple(_json_text(row.get(n)) if n in json_names else row.get(n) for n in upsert.names)
            for row in latest.values()
        ]
        if params:
            cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
            cursor.executemany(upsert.sql, params)


def _json_text(value: Any) -> str | None:
    return None if value is None else orjson.dumps(value).decode()


@cache
def _json_columns(table: Table) -> frozenset[str]:
    """The columns the driver is given JSON text for."""
    return frozenset(column.name for column in table.columns if isinstance(column.type, JSON))

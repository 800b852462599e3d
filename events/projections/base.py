"""A projection that maps each event of its types to one row of one table (upserted by key)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Connection, Insert, Table, and_, delete, insert
from sqlalchemy.dialects import postgresql, sqlite

from events.store import StoredEvent

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
        row = self.rows[event.type](event)
        key = [column == row[column.name] for column in self.table.primary_key.columns]
        conn.execute(delete(self.table).where(and_(*key)))
        conn.execute(insert(self.table).values(**row))

    def apply_many(self, conn: Connection, events: Sequence[StoredEvent]) -> None:
        """``apply`` for each event in order, as one upsert per batch instead of a delete and an insert per event."""
        statement = _replacing_insert(self.table, conn.dialect.name)
        if statement is None:
            for event in events:
                self.apply(conn, event)
            return
        names = [column.name for column in self.table.primary_key.columns]
        latest: dict[tuple[Any, ...], dict[str, Any]] = {}
        for event in events:
            row = self.rows[event.type](event)
            latest[tuple(row[name] for name in names)] = row  # the last event for a key wins, as one by one
        by_columns: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for row in latest.values():
            by_columns.setdefault(tuple(row), []).append(row)  # an executemany takes one set of columns
        for rows in by_columns.values():
            conn.execute(statement, rows)


@cache
def _replacing_insert(table: Table, dialect: str) -> Insert | None:
    """An insert that replaces the row with the same key, or None where the dialect has no upsert.

    Every other column is set from the proposed row (defaults included), so the result is the row a delete
    and an insert would leave.
    """
    statement: sqlite.Insert | postgresql.Insert
    if dialect == "sqlite":
        statement = sqlite.insert(table)
    elif dialect == "postgresql":
        statement = postgresql.insert(table)
    else:
        return None
    key = list(table.primary_key.columns)
    others = {column.name: statement.excluded[column.name] for column in table.columns if not column.primary_key}
    if not others:
        return statement.on_conflict_do_nothing(index_elements=key)
    return statement.on_conflict_do_update(index_elements=key, set_=others)

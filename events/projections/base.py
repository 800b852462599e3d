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
        """``apply`` for each event in order, as one upsert per batch instead of a delete and an insert per event.

        The upsert runs on the driver's cursor, inside the caller's transaction: SQLAlchemy's per-row
        parameter processing cost more than the database's work.
        """
        upsert = _upsert(self.table, conn.dialect.name)
        if upsert is None:
            for event in events:
                self.apply(conn, event)
            return
        sql, names, json_names = upsert
        key = [column.name for column in self.table.primary_key.columns]
        latest: dict[tuple[Any, ...], dict[str, Any]] = {}
        for event in events:
            row = self.rows[event.type](event.upcast())
            latest[tuple(row[name] for name in key)] = row  # the last event for a key wins, as one by one
        params = [
            tuple(_json_text(row.get(n)) if n in json_names else row.get(n) for n in names) for row in latest.values()
        ]
        if params:
            cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
            cursor.executemany(sql, params)


def _json_text(value: Any) -> str | None:
    return None if value is None else orjson.dumps(value).decode()


@cache
def _upsert(table: Table, dialect: str) -> tuple[str, tuple[str, ...], frozenset[str]] | None:
    """An insert replacing the row with the same key (every other column set from the proposed row, so the
    result is the row a delete and an insert would leave), its column order and its JSON columns; None
    where the dialect has no upsert."""
    if dialect not in ("sqlite", "postgresql"):
        return None
    mark = "%s" if dialect == "postgresql" else "?"
    names = tuple(column.name for column in table.columns)
    key = [column.name for column in table.primary_key.columns]
    others = [name for name in names if name not in key]
    head = f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({', '.join(mark for _ in names)})"
    action = f"DO UPDATE SET {', '.join(f'{n} = excluded.{n}' for n in others)}" if others else "DO NOTHING"
    json_names = frozenset(column.name for column in table.columns if isinstance(column.type, JSON))
    return f"{head} ON CONFLICT ({', '.join(key)}) {action}", names, json_names

"""A projection that maps each event of its types to one row of one table (upserted by key)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Table, and_, delete, insert, tuple_

from events.store import StoredEvent

__all__ = ["RowProjection", "iso"]

RowMaker = Callable[[StoredEvent], dict[str, Any]]

_KEYS_PER_DELETE = 500  # bound parameters per statement stay well under SQLite's limit


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
        """``apply`` for each event in order, as a few set-wise statements instead of two per event."""
        latest: dict[tuple[Any, ...], dict[str, Any]] = {}
        names = [column.name for column in self.table.primary_key.columns]
        for event in events:
            row = self.rows[event.type](event)
            latest[tuple(row[name] for name in names)] = row  # the last event for a key wins, as one by one
        keys = list(latest)
        columns = tuple_(*self.table.primary_key.columns) if len(names) > 1 else self.table.c[names[0]]
        for start in range(0, len(keys), _KEYS_PER_DELETE):
            chunk = keys[start : start + _KEYS_PER_DELETE]
            conn.execute(delete(self.table).where(columns.in_(chunk if len(names) > 1 else [k[0] for k in chunk])))
        by_shape: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for row in latest.values():
            by_shape.setdefault(tuple(row), []).append(row)  # an executemany needs one set of columns
        for rows in by_shape.values():
            conn.execute(insert(self.table), rows)

"""A projection that maps each event of its types to one row of one table (upserted by key)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Table, and_, delete, insert

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

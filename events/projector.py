"""Folds the log into the ledger tables: one checkpoint per projection, committed with its rows.

A projection is a fold: ``apply(conn, event)`` writes the rows one event implies, and the runner moves
the projection's checkpoint in the same transaction. A crash between two batches loses nothing and
applies nothing twice; ``rebuild`` empties the tables and refolds from position 0.
"""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import orjson
from sqlalchemy import Connection, Table, delete, func, insert, select, update

from ouroboros_gates.events import tables as t
from ouroboros_gates.events.sql import read_range
from ouroboros_gates.events.store import LedgerStore, StoredEvent

__all__ = [
    "CLOCK_COLUMNS",
    "Projection",
    "ProjectionStatus",
    "catch_up",
    "content_digest",
    "digest",
    "rebuild",
    "status",
]


class Projection(Protocol):
    """One ledger table (or a few) folded from the events of the types it handles."""

    @property
    def name(self) -> str:
        """A stable name: the checkpoint's key."""
        ...

    @property
    def tables(self) -> tuple[Table, ...]:
        """The tables it owns (emptied by a rebuild)."""
        ...

    @property
    def types(self) -> frozenset[str]:
        """The event types it folds."""
        ...

    def apply(self, conn: Connection, event: Any) -> None:
        """Write the rows this event implies (``event`` is a ``StoredEvent``)."""
        ...


@dataclass(frozen=True)
class ProjectionStatus:
    """Where a projection stands: its checkpoint and how far behind the head it is."""

    name: str
    position: int
    lag: int
    rows: int


def catch_up(
    store: LedgerStore, projections: Iterable[Projection], batch: int = 5000, until: datetime | None = None
) -> dict[str, int]:
    """Apply every event each projection has not seen; returns the count applied per projection."""
    applied: dict[str, int] = {}
    for projection in projections:
        total = 0
        while True:
            done, moved = _step(store, projection, batch, until)
            total += done
            if not moved:
                break
        applied[projection.name] = total
    return applied


def _step(store: LedgerStore, projection: Projection, batch: int, until: datetime | None) -> tuple[int, bool]:
    # A batch builds thousands of short-lived containers and frees them together: the cyclic collector
    # would only rescan them (it cost a third of a fold), so it waits until the batch is done.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _fold_batch(store, projection, batch, until)
    finally:
        if enabled:
            gc.enable()


def _fold_batch(
    store: LedgerStore, projection: Projection, batch: int, until: datetime | None
) -> tuple[int, bool]:
    with store.writing(lock_events=False) as conn:
        start = _checkpoint(conn, projection.name, lock=True)
        # Positions commit in order, so everything up to this head is already visible.
        head = int(conn.execute(select(func.coalesce(func.max(t.events.c.position), 0))).scalar_one())
        rows = read_range(conn, start, head, sorted(projection.types), batch, until)
        _apply(conn, projection, rows)
        end = rows[-1].position if len(rows) == batch else head
        if end != start:
            conn.execute(
                update(t.checkpoints)
                .where(t.checkpoints.c.projection == projection.name)
                .values(position=end)
            )
        return len(rows), end != start


def _apply(conn: Connection, projection: Projection, events: Sequence[StoredEvent]) -> None:
    """Fold a batch: set-wise where the projection can (``apply_many``), else event by event."""
    apply_many = getattr(projection, "apply_many", None)
    if apply_many is not None:
        apply_many(conn, events)
        return
    for event in events:
        projection.apply(conn, event)


def _checkpoint(conn: Connection, name: str, lock: bool = False) -> int:
    query = select(t.checkpoints.c.position).where(t.checkpoints.c.projection == name)
    if lock:
        query = query.with_for_update()
    found = conn.execute(query).scalar_one_or_none()
    if found is None:
        conn.execute(insert(t.checkpoints).values(projection=name, position=0))
        return 0
    return int(found)


def rebuild(
    store: LedgerStore, projections: Sequence[Projection], until: datetime | None = None
) -> dict[str, int]:
    """Empty every projection's tables and checkpoint, then refold from position 0."""
    with store.writing() as conn:
        for projection in projections:
            for table in reversed(projection.tables):
                conn.execute(delete(table))
            _checkpoint(conn, projection.name)
            conn.execute(
                update(t.checkpoints).where(t.checkpoints.c.projection == projection.name).values(position=0)
            )
    return catch_up(store, projections, until=until)


def status(store: LedgerStore, projections: Iterable[Projection]) -> list[ProjectionStatus]:
    """Checkpoint, lag behind the head, and row count of each projection."""
    result: list[ProjectionStatus] = []
    with store.reading() as conn:
        head = int(conn.execute(select(func.coalesce(func.max(t.events.c.position), 0))).scalar_one())
        for projection in projections:
            position = (
                conn.execute(
                    select(t.checkpoints.c.position).where(t.checkpoints.c.projection == projection.name)
                ).scalar_one_or_none()
                or 0
            )
            rows = sum(
                int(conn.execute(select(func.count()).select_from(tb)).scalar_one())
                for tb in projection.tables
            )
            result.append(ProjectionStatus(projection.name, int(position), head - int(position), rows))
    return result


def digest(store: LedgerStore, projections: Iterable[Projection]) -> str:
    """A sha256 over every projection table's rows in primary-key order (equal after a rebuild)."""
    sha = hashlib.sha256()
    with store.reading() as conn:
        for projection in projections:
            for table in projection.tables:
                order = list(table.primary_key.columns) or list(table.columns)
                sha.update(table.name.encode())
                for row in conn.execute(select(table).order_by(*order)).mappings():
                    sha.update(
                        orjson.dumps(
                            {str(k): v for k, v in row.items()}, option=orjson.OPT_SORT_KEYS, default=str
                        )
                    )
    return sha.hexdigest()


CLOCK_COLUMNS = frozenset({"position", "at", "started", "ended"})
"""The ledger's columns that say where in the log a row was folded (``position``) or when, by the clock of the
run that recorded it, something happened (a measurement's, a label request's, a merge's ``at``; a fixer
session's or labeler run's ``started``/``ended``). Two runs over the same input differ in these and in nothing
else. Times that come from the input itself (a run's ``started_at``, a proposal's ``posted_at``) are content
and stay."""


def content_digest(store: LedgerStore, projections: Iterable[Projection]) -> tuple[str, int]:
    """A sha256 over every projection table's rows without ``CLOCK_COLUMNS``, in sorted order (two runs
    interleave their messages differently), and how many rows: equal for two clean runs of the same input."""
    rows: list[bytes] = []
    with store.reading() as conn:
        for projection in projections:
            for table in projection.tables:
                kept = [column for column in table.columns if column.name not in CLOCK_COLUMNS]
                for row in conn.execute(select(*kept)).mappings():
                    body = orjson.dumps(
                        {str(k): v for k, v in row.items()}, option=orjson.OPT_SORT_KEYS, default=str
                    )
                    rows.append(table.name.encode() + b"\x1f" + body)
    return hashlib.sha256(b"\n".join(sorted(rows))).hexdigest(), len(rows)

"""The append path on the database driver itself: the hot path of every worker.

SQLAlchemy's statement machinery costs more per append than the database does on SQLite, so the write
runs as a few prepared statements (``events.statements``, generated from the tables and compiled once per
dialect) on the pooled driver connection, under the same lock and in one
transaction: head, stream versions and the handled check in one query, then the inserts. On PostgreSQL
the connection is in autocommit (a read is one round trip, with no BEGIN and COMMIT of its own) and an
append opens its transaction itself and sends its statements pipelined: the lock and the state query in
one round trip, the inserts in the next, the commit in the last.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import orjson
import psycopg

from ouroboros_gates.events import statements
from ouroboros_gates.events.errors import ConcurrencyError
from ouroboros_gates.events.statements import EVENT_ROW, HANDLED_ROW, positional
from ouroboros_gates.events.store import AppendResult, Metadata, OutboxEntry, StreamWrite, utcnow
from ouroboros_gates.schemas import Message
from ouroboros_gates.schemas.errors import TransientError

__all__ = ["RawWriter", "db_time", "translate"]


def db_time(moment: datetime, postgres: bool) -> datetime | str:
    """A time as its column takes it: itself on PostgreSQL, SQLAlchemy's naive UTC text form on SQLite."""
    return moment if postgres else moment.astimezone(UTC).replace(tzinfo=None).isoformat(" ")


_ORDERS = {
    "state": ("stream", "consumer", "message_id"),
    "event": EVENT_ROW,
    "handled": HANDLED_ROW,
    "outbox": ("message_id", "message_type", "task", "payload", "created_at"),
    "handled_check": ("consumer", "message_id"),
    "settled": ("message_id", "consumer_0", "consumer_1", "consumer_2"),
    "stream": ("stream",),
}
"""The order each statement's parameters are given in below (checked against the statement built)."""


class RawWriter:
    """Appends through a DB-API connection of the engine's pool (SQLite or PostgreSQL)."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.postgres = dialect == "postgresql"
        compiled = statements.writer_statements(dialect)
        for name, order in _ORDERS.items():
            positional(compiled[name].names, order)
        self.sql = {name: statement.sql for name, statement in compiled.items()}
        self._lock = statements.lock_events(dialect)

    def begin(self, cursor: Any) -> None:
        """Open the write transaction holding the position lock."""
        if self._lock is None:
            cursor.execute("BEGIN IMMEDIATE")
            return
        cursor.execute("BEGIN")
        cursor.execute(self._lock)

    def append(
        self, cursor: Any, writes: Sequence[StreamWrite], meta: Metadata, outbox: Sequence[Message]
    ) -> AppendResult:
        """The append, inside a transaction that holds the lock."""
        first = writes[0].stream if writes else ""
        cursor.execute(self.sql["state"], (first, meta.producer, meta.message_id or ""))
        position, version, handled = cursor.fetchone()
        if meta.message_id and handled:
            return AppendResult(duplicate=True)
        versions = self._versions(cursor, writes, first, int(version))
        stamp = db_time(utcnow(), self.postgres)
        rows = _event_rows(
            writes, versions, int(position), orjson.dumps(meta.as_dict()).decode(), meta, stamp
        )
        if rows:
            cursor.executemany(self.sql["event"], rows)
        positions = tuple(row[0] for row in rows)
        if meta.message_id:
            first_pos, last_pos = (positions[0], positions[-1]) if positions else (None, None)
            cursor.execute(self.sql["handled"], (meta.producer, meta.message_id, first_pos, last_pos, stamp))
        return AppendResult(positions=positions, outbox=self._outbox(cursor, outbox, stamp))

    def _versions(
        self, cursor: Any, writes: Sequence[StreamWrite], first: str, version: int
    ) -> dict[str, int]:
        """Each written stream's current version (the first one's came with the state query); every other
        stream's in one round trip, not one each."""
        versions = {first: version}
        others = sorted({write.stream for write in writes} - {first})
        if others:
            cursor.execute(statements.stream_versions(self.dialect, len(others)).sql, others)
            versions.update({name: 0 for name in others} | {name: int(v) for name, v in cursor.fetchall()})
        return versions

    def mark_published(self, cursor: Any, entry_ids: Sequence[int]) -> None:
        """Record the publish of the outbox entries ``entry_ids`` in one statement, in its own transaction
        (on PostgreSQL the statement's own, the connection being in autocommit)."""
        statement = statements.mark_published(self.dialect, len(entry_ids))
        stamp = db_time(utcnow(), self.postgres)
        if self.postgres:
            cursor.execute(statement.sql, statement.args(published_at=stamp, ids=list(entry_ids)))
            return
        ids = {f"id_{n}": entry for n, entry in enumerate(entry_ids)}
        cursor.execute("BEGIN IMMEDIATE")
        cursor.execute(statement.sql, statement.args(published_at=stamp, **ids))
        cursor.execute("COMMIT")

    def _outbox(
        self, cursor: Any, messages: Sequence[Message], stamp: datetime | str
    ) -> tuple[OutboxEntry, ...]:
        queued: list[OutboxEntry] = []
        for message in messages:
            payload = message.to_json_dict()
            task, kind = message.TASK, type(message).__name__
            cursor.execute(
                self.sql["outbox"], (message.message_id, kind, task, orjson.dumps(payload).decode(), stamp)
            )
            row = cursor.fetchone()
            if row is not None:
                queued.append(OutboxEntry(int(row[0]), message.message_id, kind, task, payload))
        return tuple(queued)


def _event_rows(
    writes: Sequence[StreamWrite],
    versions: dict[str, int],
    head: int,
    meta_json: str,
    meta: Metadata,
    stamp: Any,
) -> list[tuple[Any, ...]]:
    """The events' rows in ``EVENT_ROW`` order, numbered on from ``head``; each stream's expected version is
    checked against the one it holds (``ConcurrencyError``)."""
    rows: list[tuple[Any, ...]] = []
    for write in writes:
        current = versions[write.stream]
        if write.expected_version is not None and write.expected_version != current:
            raise ConcurrencyError(write.stream, write.expected_version, current)
        for item in write.events:
            current += 1
            payload = orjson.dumps(item.to_json_dict()).decode()
            rows.append(
                (
                    head + len(rows) + 1,
                    write.stream,
                    current,
                    type(item).TYPE,
                    item.schema_version,
                    payload,
                    meta_json,
                    meta.message_id,
                    stamp,
                )
            )
        versions[write.stream] = current
    return rows


def translate(exc: Exception) -> Exception:
    """The driver's error as ours: lost connections and locks are worth a retry."""
    if isinstance(exc, sqlite3.OperationalError | psycopg.OperationalError):
        return TransientError(f"event log unavailable: {exc}")
    return exc

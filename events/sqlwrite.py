"""The append path on the database driver itself: the hot path of every worker.

SQLAlchemy's statement machinery costs more per append than the database does on SQLite, so the write
runs as a few prepared statements on the pooled driver connection, under the same lock and in one
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

from ouroboros_gates.events.errors import ConcurrencyError
from ouroboros_gates.events.store import AppendResult, Metadata, OutboxEntry, StreamWrite, utcnow
from ouroboros_gates.schemas import Message
from ouroboros_gates.schemas.errors import TransientError

__all__ = ["RawWriter", "db_time", "json_columns"]

_STATE = (
    "SELECT (SELECT COALESCE(MAX(position), 0) FROM ouro_events),"
    " (SELECT COALESCE(MAX(version), 0) FROM ouro_events WHERE stream = {p}),"
    " (SELECT COUNT(*) FROM ouro_handled_messages WHERE consumer = {p} AND message_id = {p})"
)
_INSERT_EVENT = (
    "INSERT INTO ouro_events (position, stream, version, type, schema_version, payload, meta, message_id,"
    " recorded_at) VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}, {p})"
)
_INSERT_HANDLED = (
    "INSERT INTO ouro_handled_messages (consumer, message_id, first_position, last_position, handled_at)"
    " VALUES ({p}, {p}, {p}, {p}, {p})"
)
_INSERT_OUTBOX = (  # a follow-up already queued (by its message id) is not queued again
    "INSERT INTO ouro_outbox (message_id, message_type, task, payload, created_at, attempts)"
    " VALUES ({p}, {p}, {p}, {p}, {p}, 0) ON CONFLICT (message_id) DO NOTHING RETURNING id"
)
_HANDLED = "SELECT 1 FROM ouro_handled_messages WHERE consumer = {p} AND message_id = {p}"
_SETTLED = "SELECT 1 FROM ouro_handled_messages WHERE message_id = {p} AND consumer IN ({p}, {p}, {p})"
_STREAM = (
    "SELECT position, stream, version, type, schema_version, {json_columns}, recorded_at FROM ouro_events"
    " WHERE stream = {p} ORDER BY version"
)


def json_columns(postgres: bool) -> str:
    """The payload and meta columns as text to parse here (PostgreSQL's JSONB cast; SQLite stores text)."""
    return "payload::text, meta::text" if postgres else "payload, meta"


def db_time(moment: datetime, postgres: bool) -> datetime | str:
    """A time as its column takes it: itself on PostgreSQL, SQLAlchemy's naive UTC text form on SQLite."""
    return moment if postgres else moment.astimezone(UTC).replace(tzinfo=None).isoformat(" ")


class RawWriter:
    """Appends through a DB-API connection of the engine's pool (SQLite or PostgreSQL)."""

    def __init__(self, dialect: str) -> None:
        self.postgres = dialect == "postgresql"
        mark = "%s" if self.postgres else "?"
        self.sql = {
            name: text.format(p=mark, json_columns=json_columns(self.postgres))
            for name, text in {
                "state": _STATE,
                "event": _INSERT_EVENT,
                "handled": _INSERT_HANDLED,
                "outbox": _INSERT_OUTBOX,
                "handled_check": _HANDLED,
                "settled": _SETTLED,
                "stream": _STREAM,
            }.items()
        }

    def begin(self, cursor: Any) -> None:
        """Open the write transaction holding the position lock."""
        if self.postgres:
            cursor.execute("BEGIN")
            cursor.execute("LOCK TABLE ouro_events IN EXCLUSIVE MODE")
        else:
            cursor.execute("BEGIN IMMEDIATE")

    def append(
        self, cursor: Any, writes: Sequence[StreamWrite], meta: Metadata, outbox: Sequence[Message]
    ) -> AppendResult:
        """The append, inside a transaction that holds the lock."""
        first = writes[0].stream if writes else ""
        cursor.execute(self.sql["state"], (first, meta.producer, meta.message_id or ""))
        position, version, handled = cursor.fetchone()
        if meta.message_id and handled:
            return AppendResult(duplicate=True)
        versions = {first: int(version)}
        others = sorted({write.stream for write in writes} - {first})
        if others:  # every other stream's version in one round trip, not one each
            marks = ", ".join("%s" if self.postgres else "?" for _ in others)
            cursor.execute(
                f"SELECT stream, MAX(version) FROM ouro_events WHERE stream IN ({marks}) GROUP BY stream", others
            )
            versions.update({name: 0 for name in others} | {name: int(v) for name, v in cursor.fetchall()})
        stamp = db_time(utcnow(), self.postgres)
        meta_json = orjson.dumps(meta.as_dict()).decode()
        rows: list[tuple[Any, ...]] = []
        for write in writes:
            current = versions[write.stream]
            if write.expected_version is not None and write.expected_version != current:
                raise ConcurrencyError(write.stream, write.expected_version, current)
            for item in write.events:
                current += 1
                payload = orjson.dumps(item.to_json_dict()).decode()
                rows.append((int(position) + len(rows) + 1, write.stream, current, type(item).TYPE,
                             item.schema_version, payload, meta_json, meta.message_id, stamp))  # fmt: skip
            versions[write.stream] = current
        if rows:
            cursor.executemany(self.sql["event"], rows)
        positions = tuple(row[0] for row in rows)
        if meta.message_id:
            first_pos, last_pos = (positions[0], positions[-1]) if positions else (None, None)
            cursor.execute(self.sql["handled"], (meta.producer, meta.message_id, first_pos, last_pos, stamp))
        return AppendResult(positions=positions, outbox=self._outbox(cursor, outbox, stamp))

    def mark_published(self, cursor: Any, entry_ids: Sequence[int]) -> None:
        """Record the publish of the outbox entries ``entry_ids`` in one statement, in its own transaction
        (on PostgreSQL the statement's own, the connection being in autocommit)."""
        mark = "%s" if self.postgres else "?"
        ids = f"= ANY({mark})" if self.postgres else f"IN ({', '.join(mark for _ in entry_ids)})"
        sql = f"UPDATE ouro_outbox SET attempts = attempts + 1, last_error = NULL, published_at = {mark} WHERE id {ids}"
        stamp = db_time(utcnow(), self.postgres)
        if self.postgres:
            cursor.execute(sql, (stamp, list(entry_ids)))
            return
        cursor.execute("BEGIN IMMEDIATE")
        cursor.execute(sql, (stamp, *entry_ids))
        cursor.execute("COMMIT")

    def _outbox(self, cursor: Any, messages: Sequence[Message], stamp: datetime | str) -> tuple[OutboxEntry, ...]:
        queued: list[OutboxEntry] = []
        for message in messages:
            payload = message.to_json_dict()
            task, kind = message.TASK, type(message).__name__
            cursor.execute(self.sql["outbox"], (message.message_id, kind, task, orjson.dumps(payload).decode(), stamp))
            row = cursor.fetchone()
            if row is not None:
                queued.append(OutboxEntry(int(row[0]), message.message_id, kind, task, payload))
        return tuple(queued)


def translate(exc: Exception) -> Exception:
    """The driver's error as ours: lost connections and locks are worth a retry."""
    if isinstance(exc, sqlite3.OperationalError | psycopg.OperationalError):
        return TransientError(f"event log unavailable: {exc}")
    return exc

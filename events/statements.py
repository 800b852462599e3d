"""The statements the hot paths run on the database driver's own cursor, generated from the table definitions.

An append, a stream read, the handled check, a projection's batch read and its upsert skip SQLAlchemy's
per-call statement machinery (it cost more than the database's work), yet what they say about the tables is
said once, in ``events.tables`` and the projections' tables: each statement here is built with SQLAlchemy
Core from those ``Table`` objects and compiled once per dialect to its SQL text with positional marks (``?``
on SQLite, ``%s`` on PostgreSQL), with the names of its parameters in the order the marks take them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    ColumnElement,
    Table,
    Text,
    any_,
    bindparam,
    cast,
    func,
    insert,
    literal_column,
    null,
    select,
    type_coerce,
    update,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import BindParameter

from ouroboros_gates.events import tables as t

if TYPE_CHECKING:
    from sqlalchemy.dialects.postgresql.dml import Insert as PostgresInsert
    from sqlalchemy.dialects.sqlite.dml import Insert as SqliteInsert

__all__ = [
    "EVENT_ROW",
    "HANDLED_ROW",
    "Compiled",
    "compiled",
    "event_columns",
    "event_range",
    "lock_events",
    "mark_published",
    "positional",
    "stream_versions",
    "upsert",
    "writer_statements",
]

EVENT_ROW = (
    "position",
    "stream",
    "version",
    "type",
    "schema_version",
    "payload",
    "meta",
    "message_id",
    "recorded_at",
)
"""The order an appended event's values are given in (its insert names them in this order)."""

HANDLED_ROW = ("consumer", "message_id", "first_position", "last_position", "handled_at")
"""The order a handled-message row's values are given in."""


@dataclass(frozen=True)
class Compiled:
    """A statement as one dialect's driver takes it: the SQL text and its parameters' names, in order."""

    sql: str
    names: tuple[str, ...]

    def args(self, **values: Any) -> tuple[Any, ...]:
        """The parameters in the order the marks take them."""
        return tuple(values[name] for name in self.names)


@cache
def _dialect(name: str) -> Dialect:
    """A dialect that compiles positional marks (loaded when first asked for: most processes use one)."""
    if name == "postgresql":
        from sqlalchemy.dialects.postgresql.base import PGDialect

        return PGDialect(paramstyle="format")  # type: ignore[no-untyped-call]
    from sqlalchemy.dialects.sqlite.base import SQLiteDialect

    return SQLiteDialect(paramstyle="qmark")


def _upsert_insert(dialect: str, table: Table) -> PostgresInsert | SqliteInsert:
    """The dialect's INSERT that takes ON CONFLICT."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        return postgresql_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)


def compiled(statement: ClauseElement, dialect: str) -> Compiled:
    """``statement`` compiled for ``dialect`` (``sqlite`` or ``postgresql``) with positional marks."""
    done = statement.compile(dialect=_dialect(dialect))
    if not isinstance(done, SQLCompiler):  # a DDL statement: none is built here
        raise TypeError(f"not a SQL statement: {statement}")
    return Compiled(done.string, tuple(done.positiontup or ()))


def event_columns(dialect: str) -> tuple[ColumnElement[Any], ...]:
    """A whole event's columns, its payload and metadata as JSON text to parse here: the driver's own JSON
    decoding (PostgreSQL's) or SQLAlchemy's cost most of a read; SQLite already keeps the text."""
    ev = t.events.c
    as_text = (lambda c: cast(c, Text)) if dialect == "postgresql" else (lambda c: type_coerce(c, Text))
    json = (as_text(ev.payload).label("payload"), as_text(ev.meta).label("meta"))
    return (ev.position, ev.stream, ev.version, ev.type, ev.schema_version, *json, ev.recorded_at)


def lock_events(dialect: str) -> str | None:
    """The statement that takes the position lock inside a transaction (None: SQLite's BEGIN IMMEDIATE is
    it)."""
    return f"LOCK TABLE {t.events.name} IN EXCLUSIVE MODE" if dialect == "postgresql" else None


def _state() -> ClauseElement:
    """The head, one stream's version and whether the message is handled: one round trip."""
    ev, handled = t.events.c, t.handled_messages.c
    zero: ColumnElement[Any] = literal_column("0")
    return select(
        select(func.coalesce(func.max(ev.position), zero)).scalar_subquery(),
        select(func.coalesce(func.max(ev.version), zero))
        .where(ev.stream == bindparam("stream"))
        .scalar_subquery(),
        select(func.count())
        .select_from(t.handled_messages)
        .where(handled.consumer == bindparam("consumer"), handled.message_id == bindparam("message_id"))
        .scalar_subquery(),
    )


def _outbox(dialect: str) -> ClauseElement:
    """Queue a follow-up; one already queued (by its message id) is not queued again, and returns nothing."""
    box = t.outbox.c
    names = ("message_id", "message_type", "task", "payload", "created_at")
    values: dict[str, BindParameter[Any]] = {name: bindparam(name) for name in names}
    queue = _upsert_insert(dialect, t.outbox).values(**values, attempts=literal_column("0"))
    return queue.on_conflict_do_nothing(index_elements=[box.message_id]).returning(box.id)


@cache
def writer_statements(dialect: str) -> dict[str, Compiled]:
    """Every fixed statement of the append path and the writer connection's reads."""
    handled = t.handled_messages.c
    settled: list[BindParameter[Any]] = [bindparam(f"consumer_{n}") for n in range(3)]  # task, rejected, dead
    statements: dict[str, ClauseElement] = {
        "state": _state(),
        "event": insert(t.events).values({name: bindparam(name) for name in EVENT_ROW}),
        "handled": insert(t.handled_messages).values({name: bindparam(name) for name in HANDLED_ROW}),
        "outbox": _outbox(dialect),
        "handled_check": select(literal_column("1")).where(
            handled.consumer == bindparam("consumer"), handled.message_id == bindparam("message_id")
        ),
        "settled": select(literal_column("1")).where(
            handled.message_id == bindparam("message_id"), handled.consumer.in_(settled)
        ),
        "stream": select(*event_columns(dialect))
        .where(t.events.c.stream == bindparam("stream"))
        .order_by(t.events.c.version),
    }
    return {name: compiled(statement, dialect) for name, statement in statements.items()}


@cache
def stream_versions(dialect: str, streams: int) -> Compiled:
    """The last version of each of ``streams`` streams (those with none are left out)."""
    ev = t.events.c
    named: list[BindParameter[Any]] = [bindparam(f"stream_{n}") for n in range(streams)]
    return compiled(
        select(ev.stream, func.max(ev.version)).where(ev.stream.in_(named)).group_by(ev.stream), dialect
    )


@cache
def mark_published(dialect: str, entries: int) -> Compiled:
    """Mark outbox entries published (one more attempt, no error): their ids as one array on PostgreSQL, else
    one mark each."""
    box = t.outbox.c
    ids = (
        box.id == any_(bindparam("ids"))
        if dialect == "postgresql"
        else box.id.in_([bindparam(f"id_{n}") for n in range(entries)])
    )
    done = update(t.outbox).values(attempts=box.attempts + literal_column("1"), last_error=null())
    return compiled(done.values(published_at=bindparam("published_at")).where(ids), dialect)


@cache
def event_range(dialect: str, types: int, until: bool) -> Compiled:
    """Events of ``types`` types with after < position <= upto (recorded by ``until`` when asked), in
    position order, at most ``limit``: a projection's batch."""
    ev = t.events.c
    where = [ev.position > bindparam("after"), ev.position <= bindparam("upto")]
    where.append(ev.type.in_([bindparam(f"type_{n}") for n in range(types)]))
    if until:
        where.append(ev.recorded_at <= bindparam("until"))
    query = select(*event_columns(dialect)).where(*where).order_by(ev.position)
    # An offset of its own, or SQLite's compiler adds one as a parameter.
    return compiled(query.limit(bindparam("limit")).offset(literal_column("0")), dialect)


@cache
def upsert(table: Table, dialect: str) -> Compiled:
    """An insert that replaces the row with the same key (every other column set from the proposed row, so
    the result is the row a delete and an insert would leave), its parameters named by column, in the
    table's column order."""
    key = [column.name for column in table.primary_key.columns]
    others = [column.name for column in table.columns if column.name not in key]
    proposed = _upsert_insert(dialect, table).values(
        {column.name: bindparam(column.name) for column in table.columns}
    )
    if not others:
        return compiled(proposed.on_conflict_do_nothing(index_elements=key), dialect)
    replaced = {name: proposed.excluded[name] for name in others}
    return compiled(proposed.on_conflict_do_update(index_elements=key, set_=replaced), dialect)


def positional(names: Sequence[str], expected: Sequence[str]) -> None:
    """Refuse a statement whose marks do not take the parameters in the order the caller builds them."""
    if tuple(names) != tuple(expected):
        raise TypeError(
            f"statement parameters are {', '.join(names)}; the caller gives {', '.join(expected)}"
        )

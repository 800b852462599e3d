"""The SQLAlchemy event store: SQLite (WAL) embedded, PostgreSQL at scale.

Writers serialise position assignment (``BEGIN IMMEDIATE`` on SQLite, ``LOCK TABLE … IN EXCLUSIVE MODE``
on PostgreSQL, as the ``eventsourcing`` library does), so positions are gapless and commit in order:
a reader can never see position n+1 before n. Readers are not blocked by writers.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext, suppress
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import orjson
from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Select,
    create_engine,
    event,
    exists,
    func,
    select,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, OperationalError

from ouroboros_gates.events import statements
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.side import SideTables
from ouroboros_gates.events.sqlwrite import RawWriter, db_time, translate
from ouroboros_gates.events.store import (
    DEAD_LETTER,
    REJECTED,
    AppendResult,
    Metadata,
    OutboxEntry,
    StoredEvent,
    StreamWrite,
    settling,
    utcnow,
)
from ouroboros_gates.schemas import Message
from ouroboros_gates.schemas.errors import TransientError

__all__ = ["SqlEventStore", "make_engine", "normalise_url", "read_where"]

_T = TypeVar("_T")

_events = t.events.c
_LONG_NUMBER = re.compile(rb"\d{19}")  # 19 digits in a row may be an integer past 64 bits


def normalise_url(url: str) -> str:
    """Use psycopg 3 for plain PostgreSQL URLs."""
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url[len(plain) :]
    return url


LOCK_TIMEOUT_MS = 60_000
"""How long a PostgreSQL statement waits for a lock (the position lock of an append) before it fails as a
transient error to retry: as long as SQLite's busy timeout, so a session that holds the lock and hangs stalls
no worker for ever."""

_PG_CONNECT: dict[str, Any] = {
    "connect_timeout": 10,  # a server that does not answer is an error in seconds, not after TCP's minutes
    "keepalives": 1,  # a server gone without a word (a host down) is noticed on an idle connection too
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
    "options": f"-c lock_timeout={LOCK_TIMEOUT_MS}",
}


def make_engine(url: str) -> Engine:
    """An engine configured for the event log (WAL and immediate write transactions on SQLite; on PostgreSQL a
    connect timeout, TCP keepalives and a lock timeout, each overridden by the URL's own parameter)."""
    url = normalise_url(url)
    if not url.startswith("sqlite"):
        given = make_url(url).query
        connect = {name: value for name, value in _PG_CONNECT.items() if name not in given}
        return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10, connect_args=connect)
    engine = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event issue BEGIN itself, so writers can ask for IMMEDIATE.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=60000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get("ouro_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


class SqlEventStore:
    """The event store on a SQLAlchemy engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self._writer = RawWriter(self.dialect)
        self._local = threading.local()
        self._side = SideTables(engine)
        if self._writer.postgres and not event.contains(engine, "checkin", _transactional):
            event.listen(engine, "checkin", _transactional)  # however the engine was made

    @classmethod
    def from_url(cls, url: str) -> SqlEventStore:
        """Open the store at ``url`` (the schema must be at head: see ``events.migrate``)."""
        return cls(make_engine(url))

    @property
    def side_tables(self) -> SideTables:
        """The handle on the tables beside the log in its database (``events.side``)."""
        return self._side

    @contextmanager
    def writing(self, lock_events: bool = True) -> Iterator[Connection]:
        """A write transaction (holding the position lock); errors of the driver become ours."""
        try:
            with self.engine.connect() as raw:
                conn = raw.execution_options(ouro_write=True)
                with conn.begin():
                    lock = statements.lock_events(self.dialect) if lock_events else None
                    if lock is not None:
                        conn.exec_driver_sql(lock)
                    yield conn
        except OperationalError as exc:
            raise TransientError(f"event log unavailable: {exc.orig}") from exc
        except DBAPIError as exc:
            if exc.connection_invalidated:
                raise TransientError(f"event log connection lost: {exc.orig}") from exc
            raise

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A read transaction; driver errors become ``TransientError``."""
        try:
            with self.engine.connect() as conn, conn.begin():
                yield conn
        except (OperationalError, DBAPIError) as exc:
            raise TransientError(f"event log unavailable: {exc}") from exc

    def commit(
        self,
        writes: Sequence[StreamWrite],
        meta: Metadata,
        outbox: Sequence[Message] = (),
    ) -> AppendResult:
        """Append atomically; a message id already handled by this producer appends nothing."""

        def append(cursor: Any) -> AppendResult:
            with cursor.connection.pipeline() if self._writer.postgres else nullcontext():
                self._writer.begin(cursor)
                result = self._writer.append(cursor, writes, meta, outbox)
                cursor.execute("COMMIT")
            return result

        return self._on_writer(append)

    def _on_writer(self, work: Callable[[Any], _T]) -> _T:
        """Run ``work`` on a cursor of this thread's writer connection (a worker's few statements a message:
        no pool checkout, ping or statement compilation on the hot path). On PostgreSQL the connection is in
        autocommit: a single statement is its own transaction, and an append begins and commits its own."""
        connection = None
        try:
            connection = self._writer_connection()
            return work(connection.cursor())
        except BaseException as exc:
            # (no connection: the pool or the switch to autocommit failed, and there is nothing to roll back)
            if connection is not None and not _rollback(connection, self._writer.postgres):
                self._local.connection = None  # broken: the next call takes a fresh one from the pool
                connection.invalidate()
            if isinstance(exc, Exception):
                raise translate(exc) from exc
            raise

    def _writer_connection(self) -> Any:
        """This thread's writer connection, kept checked out of the pool between commits."""
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self.engine.raw_connection()
            if self._writer.postgres:
                connection.rollback()  # out of whatever the pool's ping began, to switch to autocommit
                driver: Any = connection.driver_connection
                driver.autocommit = True
            self._local.connection = connection
        return connection

    def close(self) -> None:
        """Return this thread's writer connection and close the pool."""
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            self._local.connection = None
            connection.close()
        self.engine.dispose()

    def read(self, after: int = 0, limit: int = 1000, until: datetime | None = None) -> list[StoredEvent]:
        """Events with position > after, in position order."""
        where = [_events.position > after]
        if until is not None:
            where.append(_events.recorded_at <= until)
        with self.reading() as conn:
            return read_where(conn, *where, limit=limit)

    def read_stream(self, stream: str) -> list[StoredEvent]:
        """One stream's events in version order."""

        def read(cursor: Any) -> list[StoredEvent]:
            cursor.execute(self._writer.sql["stream"], (stream,))
            return [_stored(_with_time(row)) for row in cursor.fetchall()]

        return self._on_writer(read)

    def head(self) -> int:
        """The last position (0 when empty)."""
        with self.reading() as conn:
            return int(conn.execute(select(func.coalesce(func.max(t.events.c.position), 0))).scalar_one())

    def is_handled(self, producer: str, message_id: str) -> bool:
        """Whether this producer has already handled the message."""

        def handled(cursor: Any) -> bool:
            cursor.execute(self._writer.sql["handled_check"], (producer, message_id))
            return cursor.fetchone() is not None

        return self._on_writer(handled)

    def is_settled(self, task: str, message_id: str) -> bool:
        """Whether a message of ``task`` is settled: handled, rejected at the door, or dead-lettered."""

        def settled(cursor: Any) -> bool:
            cursor.execute(self._writer.sql["settled"], (message_id, *settling(task)))
            return cursor.fetchone() is not None

        return self._on_writer(settled)

    def pending_outbox(self, limit: int = 100) -> list[OutboxEntry]:
        """Outbox entries not yet published, oldest first."""
        query = select(t.outbox).where(t.outbox.c.published_at.is_(None)).order_by(t.outbox.c.id).limit(limit)
        return self._outbox_entries(query)

    def unrecorded_outbox(self, age_s: float, limit: int = 100) -> list[OutboxEntry]:
        """Entries last published more than ``age_s`` (and less than a day) ago that no consumer has
        recorded (handled, rejected or dead-lettered): follow-ups the broker lost on the way, to publish
        again. Publishing moves an entry's time on, so a lost one keeps coming round until it is recorded,
        while a sweep reads only a day of the outbox."""
        box, handled = t.outbox.c, t.handled_messages.c
        before = utcnow() - timedelta(seconds=age_s)
        recorded = exists().where(
            handled.message_id == box.message_id,
            handled.consumer.in_([box.task, box.task + REJECTED, DEAD_LETTER]),
        )
        window = (box.published_at < before, box.published_at >= before - timedelta(days=1), ~recorded)
        return self._outbox_entries(select(t.outbox).where(*window).order_by(box.id).limit(limit))

    def _outbox_entries(self, query: Select[Any]) -> list[OutboxEntry]:
        with self.reading() as conn:
            return [
                OutboxEntry(
                    id=row["id"],
                    message_id=row["message_id"],
                    message_type=row["message_type"],
                    task=row["task"],
                    payload=row["payload"],
                    attempts=row["attempts"],
                )
                for row in conn.execute(query).mappings()
            ]

    def mark_published(self, entry_id: int, error: str | None = None) -> None:
        """Record a publish, or a failed attempt with its error."""
        values: dict[str, Any] = {"attempts": t.outbox.c.attempts + 1, "last_error": error}
        if error is None:
            values["published_at"] = utcnow()
        with self.writing(lock_events=False) as conn:
            conn.execute(update(t.outbox).where(t.outbox.c.id == entry_id).values(**values))

    def mark_all_published(self, entry_ids: Sequence[int]) -> None:
        """Record the publish of several entries in one statement."""
        if entry_ids:
            self._on_writer(lambda cursor: self._writer.mark_published(cursor, entry_ids))


def _transactional(dbapi_connection: Any, _record: Any) -> None:
    """A connection back in the pool leaves autocommit (the writer connection's) behind: SQLAlchemy's own
    transactions (``writing``, ``reading``) rely on the driver beginning one."""
    if dbapi_connection is not None and dbapi_connection.autocommit:
        with suppress(Exception):  # the driver's own error types: a broken connection the pool replaces
            dbapi_connection.autocommit = False


def _rollback(connection: Any, postgres: bool) -> bool:
    """Roll back; False when the connection is broken."""
    try:
        if postgres:
            connection.rollback()
        else:
            connection.cursor().execute("ROLLBACK")
    except Exception:  # the driver's own error types: the connection cannot be used again
        return False
    return True


def read_range(
    conn: Connection, after: int, upto: int, types: Sequence[str], limit: int, until: datetime | None = None
) -> list[StoredEvent]:
    """Events of ``types`` with after < position <= upto, in order, read on the driver's cursor inside the
    caller's transaction (the projector's hot path: SQLAlchemy's row processing cost more than the read)."""
    dialect = conn.dialect.name
    statement = statements.event_range(dialect, len(types), until is not None)
    given: dict[str, Any] = {f"type_{n}": name for n, name in enumerate(types)}
    if until is not None:
        given["until"] = db_time(until, dialect == "postgresql")
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    cursor.execute(statement.sql, statement.args(after=after, upto=upto, limit=limit, **given))
    return [_stored(_with_time(row)) for row in cursor.fetchall()]


def _with_time(row: Sequence[Any]) -> Sequence[Any]:
    recorded = row[7]
    if isinstance(recorded, str):  # SQLite keeps SQLAlchemy's text form of a UTC time
        return (*row[:7], datetime.fromisoformat(recorded))
    return row


def read_where(
    conn: Connection, *where: ColumnElement[bool], limit: int | None = None, newest_first: bool = False
) -> list[StoredEvent]:
    """Whole events meeting ``where`` (criteria on ``tables.events``), in position order (the newest first
    when asked), read in the caller's transaction: for a reader that selects by type or by a payload field
    and then decodes what it found (``StoredEvent.decode``)."""
    order = _events.position.desc() if newest_first else _events.position
    query = select(*statements.event_columns(conn.dialect.name)).where(*where).order_by(order)
    if limit is not None:
        query = query.limit(limit)
    return [_stored(row) for row in conn.execute(query)]


def _json(text: str) -> Any:
    """What ``json.loads`` returns, mostly at orjson's speed: the standard parser takes what the two read
    differently (NaN and Infinity, which orjson refuses; integers past 64 bits, which it makes floats)."""
    raw = text.encode()
    if not _LONG_NUMBER.search(raw):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def _stored(row: Any) -> StoredEvent:
    position, stream, version, type_name, schema_version, payload, meta, recorded = row
    if recorded.tzinfo is None:  # SQLite hands back naive datetimes; they were written in UTC
        recorded = recorded.replace(tzinfo=UTC)
    return StoredEvent(
        position=position,
        stream=stream,
        version=version,
        type=type_name,
        schema_version=schema_version,
        payload=_json(payload),
        meta=orjson.loads(meta),  # written by us through orjson: no number it cannot read back
        recorded_at=recorded,
    )

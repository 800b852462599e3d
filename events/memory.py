"""An in-memory event store with the same contract as the SQL one (tests and dry runs)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import create_engine
from sqlalchemy.pool import StaticPool

from ouroboros_gates.events.errors import ConcurrencyError
from ouroboros_gates.events.side import SideTables
from ouroboros_gates.events.store import (
    AppendResult,
    Metadata,
    OutboxEntry,
    StoredEvent,
    StreamWrite,
    settling,
    utcnow,
)
from ouroboros_gates.schemas import Message

__all__ = ["MemoryEventStore"]


class MemoryEventStore:
    """The event store in process memory; a lock stands in for the database's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[StoredEvent] = []
        self._versions: dict[str, int] = {}
        self._handled: set[tuple[str, str]] = set()
        self._outbox: list[OutboxEntry] = []
        self._published: dict[int, bool] = {}
        self._side: SideTables | None = None

    @property
    def side_tables(self) -> SideTables:
        """The side tables, in a private in-memory SQLite database made on first use."""
        with self._lock:
            if self._side is None:
                from ouroboros_gates.events import ledger  # the projections' modules: only when asked

                engine = create_engine(
                    "sqlite://", connect_args={"check_same_thread": False}, poolclass=StaticPool
                )
                ledger.metadata.create_all(engine)  # the side tables among every table of the log's schema
                self._side = SideTables(engine)
            return self._side

    def commit(
        self,
        writes: Sequence[StreamWrite],
        meta: Metadata,
        outbox: Sequence[Message] = (),
    ) -> AppendResult:
        """Append atomically; a message id already handled by this producer appends nothing."""
        with self._lock:
            if meta.message_id and (meta.producer, meta.message_id) in self._handled:
                return AppendResult(duplicate=True)
            staged = self._stage(writes, meta)
            self._events.extend(staged)
            for item in staged:
                self._versions[item.stream] = item.version
            if meta.message_id:
                self._handled.add((meta.producer, meta.message_id))
            return AppendResult(positions=tuple(item.position for item in staged), outbox=self._queue(outbox))

    def _stage(self, writes: Sequence[StreamWrite], meta: Metadata) -> list[StoredEvent]:
        staged: list[StoredEvent] = []
        now = utcnow()
        for write in writes:
            version = self._versions.get(write.stream, 0)
            if write.expected_version is not None and write.expected_version != version:
                raise ConcurrencyError(write.stream, write.expected_version, version)
            for offset, item in enumerate(write.events, start=1):
                staged.append(
                    StoredEvent(
                        position=len(self._events) + len(staged) + 1,
                        stream=write.stream,
                        version=version + offset,
                        type=type(item).TYPE,
                        schema_version=item.schema_version,
                        payload=item.to_json_dict(),
                        meta=meta.as_dict(),
                        recorded_at=now,
                    )
                )
        return staged

    def _queue(self, messages: Sequence[Message]) -> tuple[OutboxEntry, ...]:
        known = {entry.message_id for entry in self._outbox}
        queued: list[OutboxEntry] = []
        for message in messages:
            if message.message_id in known:
                continue
            entry = OutboxEntry(
                id=len(self._outbox) + 1,
                message_id=message.message_id,
                message_type=type(message).__name__,
                task=message.TASK,
                payload=message.to_json_dict(),
            )
            self._outbox.append(entry)
            known.add(message.message_id)
            queued.append(entry)
        return tuple(queued)

    def read(self, after: int = 0, limit: int = 1000, until: datetime | None = None) -> list[StoredEvent]:
        """Events with position > after, in position order."""
        with self._lock:
            chosen = [e for e in self._events[after:] if until is None or e.recorded_at <= until]
            return chosen[:limit]

    def read_stream(self, stream: str) -> list[StoredEvent]:
        """One stream's events in version order."""
        with self._lock:
            return [e for e in self._events if e.stream == stream]

    def head(self) -> int:
        """The last position (0 when empty)."""
        return len(self._events)

    def is_handled(self, producer: str, message_id: str) -> bool:
        """Whether this producer has already handled the message."""
        return (producer, message_id) in self._handled

    def is_settled(self, task: str, message_id: str) -> bool:
        """Whether a message of ``task`` is settled: handled, rejected at the door, or dead-lettered."""
        return any((consumer, message_id) in self._handled for consumer in settling(task))

    def pending_outbox(self, limit: int = 100) -> list[OutboxEntry]:
        """Outbox entries not yet published, oldest first."""
        with self._lock:
            return [e for e in self._outbox if not self._published.get(e.id)][:limit]

    def mark_published(self, entry_id: int, error: str | None = None) -> None:
        """Record a publish (a failed attempt leaves the entry pending)."""
        with self._lock:
            self._published[entry_id] = error is None

    def mark_all_published(self, entry_ids: Sequence[int]) -> None:
        """Record the publish of several entries at once."""
        with self._lock:
            self._published.update(dict.fromkeys(entry_ids, True))

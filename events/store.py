"""The event store's contract: what every backend (SQLAlchemy, in-memory) must do.

A write is a list of stream appends, committed atomically with the message that caused it marked as
handled and with the follow-up messages put in the outbox. Positions are global, gapless and in commit
order, so a reader that asks for "everything after p" can never skip an event that commits late.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import ValidationError

from ouroboros_gates.events.errors import UndecodableEvent, UnknownEventType, UnknownSchemaVersion
from ouroboros_gates.schemas import EVENT_TYPES, Event, Message, event_from_stored

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from sqlalchemy import Connection

    from ouroboros_gates.events.side import SideTables

__all__ = [
    "DEAD_LETTER",
    "REJECTED",
    "AppendResult",
    "EventStore",
    "LedgerStore",
    "Metadata",
    "OutboxEntry",
    "StoredEvent",
    "StreamWrite",
    "iter_all",
    "settling",
    "utcnow",
]


E = TypeVar("E", bound=Event)


def utcnow() -> datetime:
    """The current time, timezone-aware."""
    return datetime.now(UTC)


DEAD_LETTER = "fleet.dead_letter"
"""The consumer that records a message the fleet gave up on (and the task that parks it on its queue)."""

REJECTED = ":rejected"
"""Added to a task's name: the consumer that records a payload the task refused at the door."""


def settling(task: str) -> tuple[str, str, str]:
    """The consumers whose handled-message row settles a message of ``task``: the task itself, its
    rejections, and the dead letters."""
    return (task, task + REJECTED, DEAD_LETTER)


@dataclass(frozen=True)
class Metadata:
    """Who wrote an event and why: the message it answers and the chain it belongs to."""

    producer: str
    message_id: str | None = None
    causation_id: str | None = None
    correlation_id: str | None = None
    tenant: str = "default"

    def as_dict(self) -> dict[str, Any]:
        """The JSON form stored beside each event."""
        return {
            "producer": self.producer,
            "message_id": self.message_id,
            "causation_id": self.causation_id,
            "correlation_id": self.correlation_id,
            "tenant": self.tenant,
        }

    @classmethod
    def for_message(cls, producer: str, message: Message) -> Metadata:
        """Metadata of events written in answer to ``message``."""
        return cls(
            producer=producer,
            message_id=message.message_id,
            causation_id=message.message_id,
            correlation_id=message.correlation_id or message.message_id,
            tenant=message.tenant,
        )


@dataclass(frozen=True)
class StreamWrite:
    """Events for one stream; ``expected_version`` None means "whatever it is now"."""

    stream: str
    events: Sequence[Event]
    expected_version: int | None = None


@dataclass(frozen=True)
class StoredEvent:
    """An event as the log holds it."""

    position: int
    stream: str
    version: int
    type: str
    schema_version: int
    payload: dict[str, Any]
    meta: dict[str, Any]
    recorded_at: datetime

    def decode(self) -> Event:
        """The typed event: the one decoding of a stored event (``schemas.event_from_stored``: its type's
        class, the named upcasters from the version it was stored at, validation), its errors naming where
        the event lies: ``UnknownEventType``, ``UnknownSchemaVersion``, ``UndecodableEvent``."""
        with self._located():
            try:
                return event_from_stored(self.type, self.payload, self.schema_version)
            except ValidationError as exc:
                fields = "; ".join(
                    f"{'.'.join(map(str, e['loc'])) or '(payload)'}: {e['msg']}" for e in exc.errors()
                )
                raise UndecodableEvent(f"{self.type} payload refused: {fields}") from exc

    def decode_as(self, cls: builtins.type[E]) -> E:  # builtins: the field ``type`` hides the name
        """``decode`` for a reader that picked the events of ``cls``'s type (``UndecodableEvent`` if it is
        not)."""
        event = self.decode()
        if not isinstance(event, cls):
            raise UndecodableEvent(f"{self.where}: a {self.type}, read as a {cls.TYPE}")
        return event

    def upcast(self) -> StoredEvent:
        """This event with its payload as its class reads it today (itself when stored at the current
        version), through the same version check and named upcasters as ``decode``: for a fold over the
        stored JSON form that skips building the model (a projection's hot path)."""
        known = EVENT_TYPES.get(self.type)
        if known is not None and self.schema_version == known.SCHEMA_VERSION:
            return self  # the common case, first: this runs once per event a projection folds
        with self._located():
            cls = Event.registered(self.type)
            current = cls.upcast(self.payload, self.schema_version)
        return replace(self, payload=dict(current), schema_version=cls.SCHEMA_VERSION)

    @property
    def where(self) -> str:
        """Where the event lies, for an error about it."""
        return f"event {self.position} ({self.stream!r} version {self.version})"

    @contextmanager
    def _located(self) -> Iterator[None]:
        """A decoding error names where the event lies (its own class kept)."""
        try:
            yield
        except (UnknownEventType, UnknownSchemaVersion, UndecodableEvent) as exc:
            raise type(exc)(f"{self.where}: {exc}") from exc


@dataclass(frozen=True)
class OutboxEntry:
    """A follow-up message waiting to be published."""

    id: int
    message_id: str
    message_type: str
    task: str
    payload: dict[str, Any]
    attempts: int = 0


@dataclass(frozen=True)
class AppendResult:
    """What a commit did: the positions it took, or that the message had been handled already."""

    positions: tuple[int, ...] = ()
    duplicate: bool = False
    outbox: tuple[OutboxEntry, ...] = field(default=())
    """The follow-ups this commit queued (one already queued by its message id is not queued again)."""


class EventStore(Protocol):
    """The contract every backend implements; ``tests/contracts/`` runs one suite against each."""

    def commit(
        self,
        writes: Sequence[StreamWrite],
        meta: Metadata,
        outbox: Sequence[Message] = (),
    ) -> AppendResult:
        """Append atomically; a message id already handled by this producer appends nothing."""
        ...

    def read(self, after: int = 0, limit: int = 1000, until: datetime | None = None) -> list[StoredEvent]:
        """Events with position > after, in position order (recorded at or before ``until``)."""
        ...

    def read_stream(self, stream: str) -> list[StoredEvent]:
        """One stream's events in version order."""
        ...

    def head(self) -> int:
        """The last position (0 when empty)."""
        ...

    def is_handled(self, producer: str, message_id: str) -> bool:
        """Whether this producer has already handled the message."""
        ...

    def pending_outbox(self, limit: int = 100) -> list[OutboxEntry]:
        """Outbox entries not yet published, oldest first."""
        ...

    def is_settled(self, task: str, message_id: str) -> bool:
        """Whether a message of ``task`` is settled: handled, rejected at the door, or dead-lettered."""
        ...

    def mark_published(self, entry_id: int, error: str | None = None) -> None:
        """Record a publish (or a failed attempt with its error)."""
        ...

    def mark_all_published(self, entry_ids: Sequence[int]) -> None:
        """Record the publish of several entries at once."""
        ...

    @property
    def side_tables(self) -> SideTables:
        """The handle on the tables beside the log that no event replays (``events.side``): the fixers'
        budget, the decider's memory, the trigger locks."""
        ...


class LedgerStore(EventStore, Protocol):
    """An event store whose database also holds the ledger (the projections' tables): what a reader of
    the ledger, the projector and the outbox's sweeper need beyond the log. The SQL backend is one; the
    in-memory backend keeps no ledger."""

    def reading(self) -> AbstractContextManager[Connection]:
        """A read transaction on the database of the log and its ledger (driver errors become
        ``TransientError``)."""
        ...

    def writing(self, lock_events: bool = True) -> AbstractContextManager[Connection]:
        """A write transaction on that database (the projector's: a batch's rows with its checkpoint),
        holding the position lock unless ``lock_events`` is False."""
        ...

    def unrecorded_outbox(self, age_s: float, limit: int = 100) -> list[OutboxEntry]:
        """Entries published more than ``age_s`` ago that no consumer has recorded (lost on the way)."""
        ...

    def close(self) -> None:
        """Release the store's connections."""
        ...


def iter_all(store: EventStore, after: int = 0, batch: int = 1000) -> Iterator[StoredEvent]:
    """Every event after ``after``, read in batches."""
    while True:
        chunk = store.read(after=after, limit=batch)
        if not chunk:
            return
        yield from chunk
        after = chunk[-1].position

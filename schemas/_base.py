"""Base classes and the registry every contract type hangs off.

Three kinds of model:

- ``Record``: a frozen value (a finding, a span, a feature record). Unknown fields are rejected.
- ``Event``: a record that is appended to the event log. Its ``TYPE`` is a stable name, never the
  import path, and its ``schema_version`` changes only through a named upcaster.
- ``Message``: a command published on the broker for one worker's task. It carries a ``message_id``
  (the idempotency key) and the correlation and causation ids that tie a chain of work together.
"""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "EVENT_TYPES",
    "MESSAGE_TYPES",
    "RECORD_TYPES",
    "Event",
    "Message",
    "Record",
    "content_id",
]


RECORD_TYPES: dict[str, type[Record]] = {}
EVENT_TYPES: dict[str, type[Event]] = {}
MESSAGE_TYPES: dict[str, type[Message]] = {}

_R = TypeVar("_R", bound="Record")


def content_id(*parts: Any) -> str:
    """A deterministic id for a message built from its content (so a repeat is recognised)."""
    blob = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS, default=str)
    return hashlib.sha256(blob).hexdigest()[:32]


class Record(BaseModel):
    """A frozen, versioned value of the contract; unknown fields are rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    SCHEMA_VERSION: ClassVar[int] = 1
    schema_version: int = Field(default=1, ge=1, description="Version of this record's shape.")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__name__.startswith("_"):
            RECORD_TYPES[cls.__name__] = cls

    @classmethod
    def parse_json(cls: type[_R], raw: str | bytes) -> _R:
        """Validate a JSON document against this type."""
        return cls.model_validate_json(raw)

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON form, as stored in the event log or sent on the wire."""
        return self.model_dump(mode="json")


class Event(Record):
    """A fact that happened, appended to one stream of the event log."""

    TYPE: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.TYPE:
            if cls.TYPE in EVENT_TYPES and EVENT_TYPES[cls.TYPE] is not cls:
                raise TypeError(f"event type {cls.TYPE!r} is declared twice")
            EVENT_TYPES[cls.TYPE] = cls


class Message(Record):
    """A command for one worker, published on the broker; ``TASK`` names the task that consumes it."""

    TASK: ClassVar[str] = ""

    message_id: str = Field(min_length=8, max_length=128, description="Idempotency key of this message.")
    correlation_id: str | None = Field(default=None, description="Id of the first message of this chain.")
    causation_id: str | None = Field(default=None, description="Id of the message or event that caused it.")
    tenant: str = Field(default="default", min_length=1, max_length=64)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.TASK:
            MESSAGE_TYPES[cls.__name__] = cls

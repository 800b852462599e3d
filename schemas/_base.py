"""Base classes and the registry every contract type hangs off.

Three kinds of model:

- ``Record``: a frozen value (a finding, a span, a feature record). Unknown fields are rejected.
- ``Event``: a record that is appended to the event log. Its ``TYPE`` is a stable name, never the
  import path, and its ``schema_version`` changes only through a named upcaster: a class at
  ``SCHEMA_VERSION = n`` declares ``upcast_v1_v2`` … ``upcast_v<n-1>_v<n>`` (each a static method taking
  and returning a payload) and ``schema_version`` defaulting to ``n``, or its class statement fails.
- ``Message``: a command published on the broker for one worker's task. It carries a ``message_id``
  (the idempotency key) and the correlation and causation ids that tie a chain of work together.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Mapping
from importlib import import_module
from typing import Any, ClassVar, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, Field

from ouroboros_gates.schemas.errors import UnknownEventType, UnknownSchemaVersion

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

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # Checked when declared (before it is registered), not when an old stored event is first read back.
        version = cls.SCHEMA_VERSION
        missing = [name for name in _upcaster_names(version) if not callable(getattr(cls, name, None))]
        if missing:
            raise TypeError(
                f"event {cls.__name__} is at schema_version {version}: declare {', '.join(missing)}"
            )
        if cls.model_fields["schema_version"].default != version:
            raise TypeError(f"event {cls.__name__}: its schema_version field must default to {version}")
        if cls.TYPE:
            if cls.TYPE in EVENT_TYPES and EVENT_TYPES[cls.TYPE] is not cls:
                raise TypeError(f"event type {cls.TYPE!r} is declared twice")
            EVENT_TYPES[cls.TYPE] = cls

    @staticmethod
    def registered(type_name: str) -> type[Event]:
        """The class registered for a stored ``type`` (``UnknownEventType`` naming close ones otherwise)."""
        cls = EVENT_TYPES.get(type_name) or _whole().get(type_name)
        if cls is None:
            close = difflib.get_close_matches(type_name, sorted(EVENT_TYPES), n=5, cutoff=0.5)
            names = f"close names: {', '.join(close)}" if close else "no close names"
            raise UnknownEventType(f"unknown event type {type_name!r}; {names}")
        return cls

    @classmethod
    def upcast(cls, payload: Mapping[str, Any], version: int) -> Mapping[str, Any]:
        """``payload``, stored at ``version``, as this class reads it: through the named upcasters from that
        version to ``SCHEMA_VERSION`` (itself when it is current). A version the class does not know (newer
        than it, or below 1) is an ``UnknownSchemaVersion``."""
        if version == cls.SCHEMA_VERSION:
            return payload
        if not 1 <= version < cls.SCHEMA_VERSION:
            raise UnknownSchemaVersion(
                f"{cls.TYPE} payload is schema_version {version}, the class reads {cls.SCHEMA_VERSION}: "
                "no upcaster brings it there (an event newer than this code needs a newer Ouroboros)"
            )
        body = dict(payload)
        for step, name in enumerate(_upcaster_names(cls.SCHEMA_VERSION)[version - 1 :], start=version + 1):
            body = {**getattr(cls, name)(body), "schema_version": step}
        return body


def _whole() -> dict[str, type[Event]]:
    """The event registry once every family is loaded (asking the package for it loads them all)."""
    registry: dict[str, type[Event]] = getattr(import_module(__name__.rpartition(".")[0]), "EVENT_TYPES")  # noqa: B009
    return registry


def _upcaster_names(version: int) -> list[str]:
    """The upcasters a class at ``version`` declares, oldest first."""
    return [f"upcast_v{n}_v{n + 1}" for n in range(1, version)]


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

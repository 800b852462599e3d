"""Reading the measurer's input from the event log, as it stood at the instant measured."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import orjson

from ouroboros_gates.events import EventStore
from ouroboros_gates.schemas import Event, SeriesPoint, SeriesPointRecorded
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.measurer.inputs import EVENT_TYPES, MeasureInput, fold
from ouroboros_gates.workers.measurer.series import measure
from ouroboros_gates.workers.measurer.snapshot import build_snapshot

__all__ = [
    "SNAPSHOT",
    "PointKey",
    "logged",
    "measure_log",
    "point_key",
    "read_input",
    "series_stream",
    "snapshot_path",
]

SNAPSHOT = "ouroboros.json"
_BATCH = 1000


def series_stream(at: datetime) -> str:
    """The stream the points measured at ``at`` are appended to: ``series/<at in UTC, ISO 8601 with Z>``."""
    return f"series/{at.astimezone(UTC).isoformat().replace('+00:00', 'Z')}"


def snapshot_path(settings: Settings) -> Path:
    """``<state>/ouroboros.json``."""
    return settings.state_dir / SNAPSHOT


PointKey = tuple[str, str, str]
"""A point's series, instant and labels (as the ledger keys it)."""


def point_key(point: dict[str, Any]) -> PointKey:
    """The key of a point in its JSON form."""
    return (
        point["series"],
        point["at"],
        orjson.dumps(point.get("labels") or {}, option=orjson.OPT_SORT_KEYS).decode(),
    )


def _point_value(point: dict[str, Any]) -> tuple[Any, ...]:
    return (point.get("value"), point.get("reason"), point.get("low"), point.get("high"))


def logged(
    store: EventStore, at: datetime, recorded: dict[PointKey, tuple[Any, ...]] | None = None
) -> Iterator[tuple[datetime, Event]]:
    """``(recorded_at, event)`` of every event the measurer reads, recorded at or before ``at``; with
    ``recorded``, the last value the log holds for each point is kept there on the same pass."""
    after = 0
    while chunk := store.read(after=after, limit=_BATCH, until=at):
        for stored in chunk:
            if stored.type in EVENT_TYPES:
                yield stored.recorded_at, stored.decode()
            elif recorded is not None and stored.type == SeriesPointRecorded.TYPE:
                point = stored.decode_as(SeriesPointRecorded).point.to_json_dict()
                recorded[point_key(point)] = _point_value(point)
        after = chunk[-1].position


def read_input(store: EventStore, at: datetime) -> MeasureInput:
    """The log folded into ``measure``'s input, as of ``at``."""
    return fold(logged(store, at), at)


def measure_log(
    store: EventStore, at: datetime, zone: ZoneInfo, changed_only: bool = False
) -> tuple[list[SeriesPoint], dict[str, Any]]:
    """Every series as of ``at`` (with ``changed_only``, only the points whose value differs from the last
    the log recorded for them, so a measurement appends what moved, not the whole history again), and the
    snapshot that shows them all."""
    recorded: dict[PointKey, tuple[Any, ...]] = {}
    inp = fold(logged(store, at, recorded), at)
    points = measure(inp, zone)
    snapshot = build_snapshot(points, inp, zone)
    if changed_only:
        dumped = [(point, point.to_json_dict()) for point in points]
        points = [point for point, data in dumped if recorded.get(point_key(data)) != _point_value(data)]
    return points, snapshot

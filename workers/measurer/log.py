"""Reading the measurer's input from the event log, as it stood at the instant measured."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from events import EventStore, Settings
from schemas import Event, SeriesPoint
from workers.measurer.inputs import EVENT_TYPES, MeasureInput, fold
from workers.measurer.series import measure
from workers.measurer.snapshot import build_snapshot

__all__ = ["SNAPSHOT", "logged", "measure_log", "read_input", "series_stream", "snapshot_path"]

SNAPSHOT = "ouroboros.json"
_BATCH = 1000


def series_stream(at: datetime) -> str:
    """The stream the points measured at ``at`` are appended to: ``series/<at in UTC, ISO 8601 with Z>``."""
    return f"series/{at.astimezone(UTC).isoformat().replace('+00:00', 'Z')}"


def snapshot_path(settings: Settings) -> Path:
    """``<state>/ouroboros.json``."""
    return settings.state_dir / SNAPSHOT


def logged(store: EventStore, at: datetime) -> Iterator[tuple[datetime, Event]]:
    """``(recorded_at, event)`` of every event the measurer reads, recorded at or before ``at``."""
    after = 0
    while chunk := store.read(after=after, limit=_BATCH, until=at):
        for stored in chunk:
            if stored.type in EVENT_TYPES:
                yield stored.recorded_at, stored.decode()
        after = chunk[-1].position


def read_input(store: EventStore, at: datetime) -> MeasureInput:
    """The log folded into ``measure``'s input, as of ``at``."""
    return fold(logged(store, at), at)


def measure_log(store: EventStore, at: datetime, zone: ZoneInfo) -> tuple[list[SeriesPoint], dict[str, Any]]:
    """Every series as of ``at``, and the snapshot that shows them."""
    inp = read_input(store, at)
    points = measure(inp, zone)
    return points, build_snapshot(points, inp, zone)

"""Celery task of the measurer (thin: validate, read the log, call the core, append)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from ouroboros_gates.schemas import Measure, SeriesPointRecorded
from ouroboros_gates.workers.measurer.log import measure_log, series_stream, snapshot_path
from ouroboros_gates.workers.measurer.snapshot import write_snapshot
from ouroboros_gates.workers.shell import Context, Outcome, fleet_task

__all__ = ["measure"]


@fleet_task(Measure)
def measure(message: Measure, ctx: Context) -> Outcome:
    """measurer.measure: every point that moved as of ``message.at`` to ``series/<at>``, and the snapshot."""
    points, snapshot = measure_log(ctx.store, message.at, ZoneInfo(ctx.settings.timezone), changed_only=True)
    write_snapshot(snapshot_path(ctx.settings), snapshot)
    stream = series_stream(message.at)
    if not points or ctx.store.read_stream(stream):
        return Outcome()  # nothing moved, or another message measured this instant already
    return Outcome.single(stream, *(SeriesPointRecorded(point=point) for point in points))

"""Celery task of the measurer (thin: validate, read the log, call the core, append)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from schemas import Measure, SeriesPointRecorded
from workers.measurer.log import measure_log, series_stream, snapshot_path
from workers.measurer.snapshot import write_snapshot
from workers.shell import Context, Outcome, fleet_task

__all__ = ["measure"]


@fleet_task(Measure)
def measure(message: Measure, ctx: Context) -> Outcome:
    """measurer.measure: every series as of ``message.at`` to ``series/<at>``, and the snapshot."""
    points, snapshot = measure_log(ctx.store, message.at, ZoneInfo(ctx.settings.timezone))
    write_snapshot(snapshot_path(ctx.settings), snapshot)
    stream = series_stream(message.at)
    if ctx.store.read_stream(stream):
        return Outcome()  # another message measured this instant already; the log as of it has not changed
    return Outcome.single(stream, *(SeriesPointRecorded(point=point) for point in points))

"""Cost folding for cumulative counters that restart when a process is reopened."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["fold_cumulative"]


def fold_cumulative(values: Iterable[float]) -> float:
    """Sum of the maximum of each non-decreasing run of a cumulative counter.

    The executor reports ``total_cost_usd`` cumulatively within one process and from zero again when
    the process is reopened, so a drop marks a new process: its predecessor's last value was its total.
    """
    total = 0.0
    previous: float | None = None
    for value in values:
        if previous is not None and value < previous:
            total += previous
        previous = value
    return total + (previous or 0.0)

"""The measurer: the loop's series (struggle rate, compounding, structure, spend, h_fleet) and snapshot.

The core (``series``, ``stats``, ``inputs``, ``hfleet``, ``snapshot``) imports neither Celery nor
SQLAlchemy; ``log`` reads the event log and ``tasks`` is the thin ``measurer.measure`` task. Each name is
imported from its module on first use (``__getattr__``): ``ouro measure h-fleet`` loads ``hfleet`` alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ouroboros_gates._lazy import lazy

if TYPE_CHECKING:
    from ouroboros_gates.workers.measurer.hfleet import (
        FLOOR,
        HFleet,
        RunRatio,
        offenders,
        read_h_fleet,
        read_h_fleet_runs,
        run_name,
    )
    from ouroboros_gates.workers.measurer.inputs import (
        EVENT_TYPES,
        MeasureInput,
        RunCounts,
        SessionCost,
        Structure,
        fold,
    )
    from ouroboros_gates.workers.measurer.log import (
        SNAPSHOT,
        logged,
        measure_log,
        read_input,
        series_stream,
        snapshot_path,
    )
    from ouroboros_gates.workers.measurer.series import SERIES, ZONE, measure, period_of, period_start
    from ouroboros_gates.workers.measurer.snapshot import build_snapshot, write_snapshot
    from ouroboros_gates.workers.measurer.stats import Fit, ols, t_975


__all__ = [
    "EVENT_TYPES",
    "FLOOR",
    "SERIES",
    "SNAPSHOT",
    "ZONE",
    "Fit",
    "HFleet",
    "MeasureInput",
    "RunCounts",
    "RunRatio",
    "SessionCost",
    "Structure",
    "build_snapshot",
    "fold",
    "logged",
    "measure",
    "measure_log",
    "offenders",
    "ols",
    "period_of",
    "period_start",
    "read_h_fleet",
    "read_h_fleet_runs",
    "read_input",
    "run_name",
    "series_stream",
    "snapshot_path",
    "t_975",
    "write_snapshot",
]


_HOMES = {
    "EVENT_TYPES": "ouroboros_gates.workers.measurer.inputs",
    "FLOOR": "ouroboros_gates.workers.measurer.hfleet",
    "Fit": "ouroboros_gates.workers.measurer.stats",
    "HFleet": "ouroboros_gates.workers.measurer.hfleet",
    "MeasureInput": "ouroboros_gates.workers.measurer.inputs",
    "RunCounts": "ouroboros_gates.workers.measurer.inputs",
    "RunRatio": "ouroboros_gates.workers.measurer.hfleet",
    "SERIES": "ouroboros_gates.workers.measurer.series",
    "SNAPSHOT": "ouroboros_gates.workers.measurer.log",
    "SessionCost": "ouroboros_gates.workers.measurer.inputs",
    "Structure": "ouroboros_gates.workers.measurer.inputs",
    "ZONE": "ouroboros_gates.workers.measurer.series",
    "build_snapshot": "ouroboros_gates.workers.measurer.snapshot",
    "fold": "ouroboros_gates.workers.measurer.inputs",
    "logged": "ouroboros_gates.workers.measurer.log",
    "measure": "ouroboros_gates.workers.measurer.series",
    "measure_log": "ouroboros_gates.workers.measurer.log",
    "offenders": "ouroboros_gates.workers.measurer.hfleet",
    "ols": "ouroboros_gates.workers.measurer.stats",
    "period_of": "ouroboros_gates.workers.measurer.series",
    "period_start": "ouroboros_gates.workers.measurer.series",
    "read_h_fleet": "ouroboros_gates.workers.measurer.hfleet",
    "read_h_fleet_runs": "ouroboros_gates.workers.measurer.hfleet",
    "read_input": "ouroboros_gates.workers.measurer.log",
    "run_name": "ouroboros_gates.workers.measurer.hfleet",
    "series_stream": "ouroboros_gates.workers.measurer.log",
    "snapshot_path": "ouroboros_gates.workers.measurer.log",
    "t_975": "ouroboros_gates.workers.measurer.stats",
    "write_snapshot": "ouroboros_gates.workers.measurer.snapshot",
}
"""Where each name of ``__all__`` lives (the ``TYPE_CHECKING`` block says the same, for mypy)."""

__getattr__ = lazy(__name__, _HOMES)

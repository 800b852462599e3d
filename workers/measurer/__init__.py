"""The measurer: the loop's series (struggle rate, compounding, structure, spend, h_fleet) and snapshot.

The core (``series``, ``stats``, ``inputs``, ``hfleet``, ``snapshot``) imports neither Celery nor
SQLAlchemy; ``log`` reads the event log and ``tasks`` is the thin ``measurer.measure`` task. Each name is
imported from its module on first use (``__getattr__``): ``ouro measure h-fleet`` loads ``hfleet`` alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ouroboros_gates.schemas._lazy import reexport

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


__getattr__ = reexport(__name__, __file__)

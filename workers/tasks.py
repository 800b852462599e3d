"""Every task of the fleet, imported so that a worker registers them all."""

from __future__ import annotations

from workers import probe
from workers.measurer import tasks as measurer_tasks  # noqa: F401  (registers measurer.measure)
from workers.miner import tasks as miner_tasks
from workers.triggers import trigger as fleet_trigger  # noqa: F401  (registers fleet.trigger)

__all__ = ["miner_tasks", "probe"]

"""Every task of the fleet, imported so that a worker registers them all."""

from __future__ import annotations

from workers import fleet
from workers.decider import tasks as decider_tasks  # noqa: F401  (registers decider.decide)
from workers.fixer import tasks as fixer_tasks  # noqa: F401  (registers fixer.launch)
from workers.labeler import tasks as labeler_tasks  # noqa: F401  (registers labeler.label)
from workers.measurer import tasks as measurer_tasks  # noqa: F401  (registers measurer.measure)
from workers.merger import tasks as merger_tasks  # noqa: F401  (registers merger.train)
from workers.miner import tasks as miner_tasks
from workers.prechecker import tasks as prechecker_tasks  # noqa: F401  (prechecker.precheck, prechecker.sweep)

__all__ = ["fleet", "miner_tasks"]

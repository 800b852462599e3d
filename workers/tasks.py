"""Every task of the fleet, imported so that a worker registers them all."""

from __future__ import annotations

from ouroboros_gates.workers import fleet
from ouroboros_gates.workers.decider import tasks as decider_tasks  # noqa: F401  (registers decider.decide)
from ouroboros_gates.workers.fixer import tasks as fixer_tasks  # noqa: F401  (registers fixer.launch)
from ouroboros_gates.workers.labeler import tasks as labeler_tasks  # noqa: F401  (registers labeler.label)
from ouroboros_gates.workers.measurer import tasks as measurer_tasks  # noqa: F401  (registers measurer.measure)
from ouroboros_gates.workers.merger import tasks as merger_tasks  # noqa: F401  (registers merger.train)
from ouroboros_gates.workers.miner import tasks as miner_tasks
from ouroboros_gates.workers.prechecker import tasks as prechecker_tasks  # noqa: F401  (prechecker.precheck, prechecker.sweep)

__all__ = ["fleet", "miner_tasks"]

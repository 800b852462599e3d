"""The main job (``ouro loop``) and its steps, each through the queue, and what it prints.

- ``queue``: ``through_queue``, the one way a step has its messages handled by a worker, and ``Handled``,
  what came of them (handled now, handled before, not handled in time and why).
- ``ingest``: the runs ingested and mined, and the measurement (the first and last steps).
- ``precheck``: the pre-check of the forge's mining tickets and the label requests it queues.
- ``hands``: fixer sessions and the merge train (also ``ouro fix``, ``ouro train``, ``ouro close-ticket``).
- ``pushes``: the forge's example pushes, decided by the decider worker.
- ``summary``: the sections of the summary on what the fleet found, read back from the ledger.
- ``summary_hands``: the sections on the loop's hands (pre-check verdicts, fixer sessions, the merge train).
- ``main``: ``run_loop``, the steps in order and the summary.
"""

from __future__ import annotations

from ouroboros_gates.ops.loop.hands import close_ticket, fix, fixers_refusal, launch_verdicts, train_here
from ouroboros_gates.ops.loop.main import loop_forge, run_loop
from ouroboros_gates.ops.loop.queue import Handled, through_queue
from ouroboros_gates.ops.loop.summary_hands import print_fixers, print_train

__all__ = [
    "Handled",
    "close_ticket",
    "fix",
    "fixers_refusal",
    "launch_verdicts",
    "loop_forge",
    "print_fixers",
    "print_train",
    "run_loop",
    "through_queue",
    "train_here",
]

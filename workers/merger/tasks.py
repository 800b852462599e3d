"""Celery task of the merger (thin: run the train over the configured forge, append what it did)."""

from __future__ import annotations

from ouroboros_gates.forge.factory import open_forge
from ouroboros_gates.schemas import RunMergeTrain
from ouroboros_gates.workers.merger.core import train_writes
from ouroboros_gates.workers.shell import Context, Outcome, fleet_task


@fleet_task(RunMergeTrain)
def train(message: RunMergeTrain, ctx: Context) -> Outcome:
    """merger.train: every ready head not tried yet; MergeAttempted then Merged/MergeRefused per head."""
    return Outcome(writes=train_writes(open_forge(ctx.settings), ctx.store, ctx.settings))

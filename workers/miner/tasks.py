"""Celery tasks of the miner worker (thin: validate, call the core, append)."""

from __future__ import annotations

from schemas import IngestRun
from workers.miner.ingest import ingest_run
from workers.shell import Context, Outcome, fleet_task


@fleet_task(IngestRun)
def ingest(message: IngestRun, ctx: Context) -> Outcome:
    """miner.ingest: record a harness run."""
    return Outcome.single(f"run/{message.run}", ingest_run(message, ctx.settings))

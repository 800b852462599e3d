"""Celery tasks of the miner worker (thin: validate, call the core, append)."""

from __future__ import annotations

from pathlib import Path

from ouroboros_gates.miners import CorpusItem
from ouroboros_gates.miners.corpus import JSONL
from ouroboros_gates.schemas import FindingDerived, IngestRun, MineRun
from ouroboros_gates.schemas.errors import PermanentError
from ouroboros_gates.workers.miner.ingest import ingest_run, mine_message, run_paths
from ouroboros_gates.workers.miner.mine import finding_key, fleet_gates, mine_run
from ouroboros_gates.workers.paths import confine
from ouroboros_gates.workers.shell import Context, Outcome, fleet_task


@fleet_task(IngestRun, pure=True)
def ingest(message: IngestRun, ctx: Context) -> Outcome:
    """miner.ingest: record a harness run, then ask for it to be mined (through the outbox). Pure: a
    redelivered message reads the run again and appends nothing."""
    recorded = ingest_run(message, ctx.settings)
    return Outcome.single(f"run/{message.run}", recorded, follow_ups=(mine_message(message, recorded.digest),))


@fleet_task(MineRun, pure=True)
def mine(message: MineRun, ctx: Context) -> Outcome:
    """miner.mine: every miner the fleet accepted on the run; findings already recorded for it are not repeated.
    Pure (a verdict on a miner version is an idempotent append): a redelivered message mines again and appends
    nothing."""
    recorded = [e for e in ctx.store.read_stream(f"run/{message.run}") if e.type == "RunRecorded"]
    if not recorded:
        raise PermanentError(f"run {message.run!r} has not been recorded: nothing to mine")
    path = confine(recorded[-1].payload["path"], ctx.settings)
    gates = fleet_gates(ctx.store, message.tenant)  # the verdict the log holds on each miner version
    seen = {
        finding_key(FindingDerived.model_validate(e.payload).finding, message.run)
        for e in ctx.store.read_stream(f"findings/{message.run}")
    }
    item = CorpusItem(JSONL, message.run, Path(path), run_paths(Path(path)))
    new = [f for f in mine_run(item, gates) if finding_key(f, message.run) not in seen]
    return Outcome.single(f"findings/{message.run}", *(FindingDerived(run=message.run, finding=f) for f in new))

"""Celery tasks of the miner worker (thin: validate, load, call the core, append).

A run is recorded (``miner.ingest``), the miner versions the log holds no verdict on are judged
(``miner.accept``, only when there are any), then the run is mined by the versions accepted (``miner.mine``),
each step asking for the next through the outbox.

What a process keeps between messages its context holds (``Context.keep``): the ``Catalogue`` of its miners
(found at most every 2 s, each version's rules parsed once) and the ``KnownVerdicts`` it has read from the
log (a recorded verdict never changes).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from ouroboros_gates.events import LedgerStore
from ouroboros_gates.events.recorded import recorded_runs
from ouroboros_gates.miners import CorpusItem
from ouroboros_gates.miners.corpus import JSONL
from ouroboros_gates.schemas import AcceptMiner, IngestRun, MineRun
from ouroboros_gates.workers.miner.accept import judge_pending, mine_later, then_mine
from ouroboros_gates.workers.miner.catalogue import Catalogue
from ouroboros_gates.workers.miner.ingest import ingest_run, mine_message, run_paths
from ouroboros_gates.workers.miner.mine import findings_stream, new_findings
from ouroboros_gates.workers.miner.verdicts import KnownVerdicts, fleet_gates, read_verdicts, verdict_writes
from ouroboros_gates.workers.paths import confine
from ouroboros_gates.workers.shell import Context, Outcome, fleet_task


@fleet_task(IngestRun, pure=True)
def ingest(message: IngestRun, ctx: Context) -> Outcome:
    """miner.ingest: record a harness run, then ask for it to be mined, through ``miner.accept`` when a miner
    version has no verdict yet (through the outbox). Pure: a redelivered message reads the run again and
    appends nothing."""
    recorded = ingest_run(message, ctx.settings)
    versions = ctx.keep(Catalogue).versions()
    pending = ctx.keep(KnownVerdicts).of(ctx.store, versions).pending(versions)
    follow = then_mine(mine_message(message, recorded.digest, recorded.path), pending)
    return Outcome.single(f"run/{message.run}", recorded, follow_ups=(follow,))


@fleet_task(AcceptMiner, pure=True)
def accept(message: AcceptMiner, ctx: Context) -> Outcome:
    """miner.accept: judge each miner version the log holds no verdict on (its whole test, mutation included,
    on the runs recorded), append the verdicts, then ask for the run to be mined. Pure: a verdict another
    worker recorded first makes the append a ConcurrencyError, and the retry follows that verdict."""
    versions = ctx.keep(Catalogue).versions()
    verdicts = read_verdicts(ctx.store, versions)
    judged = judge_pending(verdicts.pending(versions), partial(_run_ids, ctx.store))
    return Outcome(writes=verdict_writes(verdicts, judged), follow_ups=(message.mine,))


def _run_ids(store: LedgerStore) -> dict[Path, str]:
    """The runs recorded, by path: what a version is judged on (read only when one is to be judged)."""
    return {run.path: run.run for run in recorded_runs(store)}


@fleet_task(MineRun, pure=True)
def mine(message: MineRun, ctx: Context) -> Outcome:
    """miner.mine: every miner version the fleet accepted, on the run; findings already recorded for it are
    not repeated. A version found with no verdict yet is judged first and the run mined after. Pure."""
    catalogue = ctx.keep(Catalogue)
    versions = catalogue.versions()
    verdicts = ctx.keep(KnownVerdicts).of(ctx.store, versions)
    if pending := verdicts.pending(versions):
        return Outcome(follow_ups=(mine_later(message, pending),))
    path = confine(message.path, ctx.settings)
    item = CorpusItem(JSONL, message.run, path, run_paths(path))
    gates = fleet_gates(versions, verdicts, catalogue.rules)
    found = new_findings(item, gates, ctx.store.read_stream(findings_stream(message.run)))
    return Outcome.single(findings_stream(message.run), *found)

"""The miner worker's three steps, each a task whose core returns its events and its follow-up: a run is
recorded, the miner versions the log holds no verdict on are judged (``miner.accept``, only then), then the
run is mined by the accepted ones; a mine that meets a version with no verdict asks for it to be judged and
mines the run after. Driven here through each task's own core and the log's commit, as the shell does."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ouroboros_gates.events import Metadata, SqlEventStore, ensure_schema
from ouroboros_gates.miners import CorpusItem
from ouroboros_gates.miners.corpus import JSONL
from ouroboros_gates.schemas import AcceptMiner, FindingDerived, IngestRun, Message, MinerAccepted, MineRun
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.miner import tasks
from ouroboros_gates.workers.miner.accept import accepted_gates
from ouroboros_gates.workers.miner.catalogue import Catalogue, MinerVersion
from ouroboros_gates.workers.miner.ingest import mine_message, run_paths
from ouroboros_gates.workers.miner.mine import mine_run
from ouroboros_gates.workers.shell import Context

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "runs"
RUNS = ("3e7b1f5d-9c2a-4d84-a6f3-8b0e5d2c7a41", "7a2c5f9e-1d3b-4e8a-9c64-0f5b3e7d2a19")


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[Context]:
    for run in RUNS:
        shutil.copytree(EXAMPLES / run, tmp_path / "runs" / run)
    store = SqlEventStore.from_url(f"sqlite:///{tmp_path / 'events.sqlite'}")
    ensure_schema(store.engine)
    settings = Settings(state=tmp_path / "state", roots=str(tmp_path / "runs"))
    # this test's own catalogue, looked at each time
    yield Context(settings, store, "test", kept={Catalogue: Catalogue(None, fresh_s=0)})
    store.close()


def _handle(ctx: Context, message: Message) -> list[Message]:
    """What the shell does with a message: the task's core, then one commit keyed by the message id."""
    task: Any = {t.message_type: t for t in (tasks.ingest, tasks.accept, tasks.mine)}[type(message)]
    outcome = task.handler(message, ctx)
    ctx.store.commit(outcome.writes, Metadata.for_message(message.TASK, message), outcome.follow_ups)
    return list(outcome.follow_ups)


def _ingest(ctx: Context, run: str) -> IngestRun:
    return IngestRun(message_id=f"ingest-{run[:8]}", path=str(ctx.settings.allowed_roots[1] / run), run=run)


def _findings(ctx: Context, run: str) -> list[FindingDerived]:
    return [event.decode_as(FindingDerived) for event in ctx.store.read_stream(f"findings/{run}")]


def test_the_first_run_is_mined_after_the_miners_are_judged_and_the_next_one_at_once(ctx: Context) -> None:
    first = _ingest(ctx, RUNS[0])
    [accept] = _handle(ctx, first)
    assert isinstance(accept, AcceptMiner)
    assert (
        accept.mine.message_id == mine_message(first, accept.mine.digest).message_id
    )  # what the main job awaits
    assert not ctx.store.read_stream("miner/draft-pr-late")  # nothing judged while recording a run

    [mine] = _handle(ctx, accept)
    assert mine == accept.mine and mine.causation_id == accept.message_id
    accepted = [
        e.decode() for name in ("draft-pr-late", "self-match") for e in ctx.store.read_stream(f"miner/{name}")
    ]
    assert [type(event) for event in accepted] == [MinerAccepted, MinerAccepted]
    assert all(
        event.acceptance.judged_runs == (RUNS[0],) for event in accepted if isinstance(event, MinerAccepted)
    )
    assert _handle(ctx, mine) == []
    path = Path(mine.path)
    expected = mine_run(CorpusItem(JSONL, RUNS[0], path, run_paths(path)), accepted_gates())
    assert [event.finding for event in _findings(ctx, RUNS[0])] == expected
    assert _handle(ctx, mine) == [] and len(_findings(ctx, RUNS[0])) == len(
        expected
    )  # mined again: no repeat

    [direct] = _handle(ctx, _ingest(ctx, RUNS[1]))  # every version has its verdict now
    assert isinstance(direct, MineRun)
    _handle(ctx, direct)
    miners = {event.finding.miner for event in _findings(ctx, RUNS[1])}
    assert miners == {"draft-pr-late", "cache-floor", "repeat-failure"}


class _Republished(Catalogue):
    """A worker that finds one miner's files changed since the versions were judged (a new digest)."""

    def versions(self) -> tuple[MinerVersion, ...]:
        found = super().versions()
        return tuple(MinerVersion(v.miner, "f" * 64) if v.name == "sleep-poll" else v for v in found)


def test_a_mine_that_finds_a_version_with_no_verdict_has_it_judged_then_mines(ctx: Context) -> None:
    [accept] = _handle(ctx, _ingest(ctx, RUNS[0]))
    [mine] = _handle(ctx, accept)
    ctx.kept[Catalogue] = _Republished(None, fresh_s=0)
    [later] = _handle(ctx, mine)
    assert isinstance(later, AcceptMiner) and later.mine.run == RUNS[0]
    assert later.mine.message_id != mine.message_id and later.mine.causation_id == later.message_id
    assert _findings(ctx, RUNS[0]) == []  # nothing mined with a version not judged yet
    [again] = _handle(ctx, later)
    verdicts = [e.decode() for e in ctx.store.read_stream("miner/sleep-poll")]
    assert len(verdicts) == 2 and isinstance(verdicts[1], MinerAccepted)
    assert verdicts[1].acceptance.digest == "f" * 64
    _handle(ctx, again)
    assert "sleep-poll" in {event.finding.miner for event in _findings(ctx, RUNS[0])}

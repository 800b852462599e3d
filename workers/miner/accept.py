"""Acceptance, a step of its own: which versions of the miners are gates, judged once per version.

A miner is accepted (and becomes a gate) only when its own test passes: check_rules, FN = 0 on the
walk-forward backtest, the mutation gate. Acceptance is decided once per version of the miner's files (a
digest of its folder); the fitted κ* is the knee it mines with. In the fleet the mutation test judges
equivalence on the runs the event log holds when that version is judged, beside the fixtures
(``miner_test(…, runs=…)``): a mutant that changes a verdict on a recorded run is not equivalent.

``miner.accept`` judges, before a run is mined, each version the log holds no verdict on, and appends the
verdicts (``verdicts``); ``miner.ingest`` sends it instead of the run's ``MineRun`` whenever a version found
has none yet, and it sends that ``MineRun`` after. ``accepted_gates`` is the same judgement without a log (the
push gate's cache, the corpus benchmark).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ouroboros_gates.miners import BacktestResult, MinerError, MinerTestReport, MutationResult, miner_test
from ouroboros_gates.schemas import (
    AcceptMiner,
    MinerAcceptance,
    MinerAccepted,
    MinerRefused,
    MineRun,
    content_id,
)
from ouroboros_gates.schemas.errors import CorpusError
from ouroboros_gates.workers.miner.catalogue import MinerVersion, discover_versions
from ouroboros_gates.workers.miner.mine import Gate
from ouroboros_gates.workers.miner.verdicts import Verdict

__all__ = [
    "Judge",
    "Judgement",
    "RecordedPaths",
    "accept_message",
    "accepted_gates",
    "judge",
    "judge_pending",
    "mine_later",
    "then_mine",
]

RecordedPaths = Callable[[], Sequence[Path]]
"""The paths of the runs the event log holds, asked for only when a miner version is judged."""


@dataclass(frozen=True)
class Judgement:
    """One version of a miner as its own test judged it: accepted (with its acceptance) or refused (why)."""

    version: MinerVersion
    acceptance: MinerAcceptance | None
    reason: str
    runs: tuple[Path, ...]
    """The recorded runs its mutants were judged on (beside its fixtures)."""


def judge(version: MinerVersion, runs: Sequence[Path]) -> Judgement:
    """The miner test's judgement of one version, its mutants judged on the ``runs`` still there."""
    report, readable = _tested(version, runs)
    if not report.passed or report.backtest is None or report.mutation is None:
        return Judgement(version, None, _failure(report), readable)
    return Judgement(version, _acceptance(version, report.backtest, report.mutation), "", readable)


def _failure(report: MinerTestReport) -> str:
    """Why the test refused a version: its failed checks (1,000 characters at most), or that it never ran."""
    failed = [f"{check.name}: {check.detail}" for check in report.checks if not check.passed]
    return "; ".join(failed)[:1000] or "its test did not run"


def _acceptance(version: MinerVersion, backtest: BacktestResult, mutation: MutationResult) -> MinerAcceptance:
    """The acceptance of a version that passed its test (a mutation score of None counts as 1)."""
    score = mutation.report.score
    return MinerAcceptance(
        miner=version.name,
        scope=version.miner.scope,
        backtest=backtest.record().summary(),
        mutation_score=1.0 if score is None else score,
        mutation_floor=mutation.report.floor,
        test_passed=True,
        digest=version.digest,
    )


def _tested(version: MinerVersion, runs: Sequence[Path]) -> tuple[MinerTestReport, tuple[Path, ...]]:
    """The miner test's report with the runs it judged mutants on: those still there, or none when one of
    them cannot be read (a recorded run it cannot read must not stop every miner's acceptance)."""
    readable = tuple(run for run in runs if run.exists())
    try:
        return miner_test(version.miner, runs=[str(run) for run in readable]), readable
    except (CorpusError, MinerError):
        return miner_test(version.miner), ()


def _verdict(judgement: Judgement, run_ids: Mapping[Path, str]) -> Verdict:
    """The event recording a judgement, naming the recorded runs it was judged on."""
    judged_runs = tuple(sorted(run_ids[path] for path in judgement.runs if path in run_ids))
    if judgement.acceptance is not None:
        return MinerAccepted(acceptance=judgement.acceptance.model_copy(update={"judged_runs": judged_runs}))
    version = judgement.version
    return MinerRefused(
        miner=version.name, digest=version.digest, reason=judgement.reason, judged_runs=judged_runs
    )


Judge = Callable[[MinerVersion, Sequence[Path]], Judgement]


def judge_pending(
    pending: Sequence[MinerVersion], run_ids: Callable[[], Mapping[Path, str]], by: Judge = judge
) -> list[tuple[MinerVersion, Verdict]]:
    """Each pending version with its verdict, judged (``by`` the miner test) on the runs ``run_ids`` names:
    asked once, and only when a version is pending."""
    if not pending:
        return []
    ids = run_ids()
    return [(version, _verdict(by(version, list(ids)), ids)) for version in pending]


def accepted_gates(extra: str | None = None, runs: RecordedPaths | None = None) -> list[Gate]:
    """Every discovered miner that passes its test, judged now, with the knee its backtest fitted; ``runs``:
    the recorded runs a mutant must not change to be equivalent (asked once per version judged)."""
    gates = []
    for version in discover_versions(extra):
        acceptance = judge(version, list(runs()) if runs is not None else []).acceptance
        if acceptance is not None:
            gates.append(Gate.of(version, MinerAccepted(acceptance=acceptance), version.miner.rules()))
    return gates


def accept_message(mine: MineRun) -> AcceptMiner:
    """Judge what is pending, then send ``mine`` (caused by the judgement); its id follows the mine's."""
    accept_id = content_id("accept", mine.message_id)
    then = mine.model_copy(update={"causation_id": accept_id})
    return AcceptMiner(
        message_id=accept_id,
        correlation_id=mine.correlation_id,
        causation_id=mine.causation_id,
        tenant=mine.tenant,
        mine=then,
    )


def then_mine(mine: MineRun, pending: Sequence[MinerVersion]) -> MineRun | AcceptMiner:
    """What follows a recorded run: its mine, or first the judgement of the miner versions with no verdict."""
    return accept_message(mine) if pending else mine


def mine_later(mine: MineRun, pending: Sequence[MinerVersion]) -> AcceptMiner:
    """A mine that finds versions with no verdict (published since its run was recorded) mines nothing yet:
    they are judged first, then the run is mined by a new message (this one is handled as it is)."""
    again = content_id("mine", mine.message_id, *(version.digest for version in pending))
    return accept_message(mine.model_copy(update={"message_id": again, "causation_id": mine.message_id}))

"""What miners produce: findings with proofs, backtests, mutation reports, labels and acceptances.

A finding's ``proof`` lists the extracted facts the derivation used, each with its span. A backtest is
walk-forward: labels ordered by start and split at ``t``; the fit half chooses the knee, the judged half
counts TP/FP/FN. A mutation report scores the miner's own test. A miner is accepted only when its test
passes, the backtest misses nothing and the mutation gate holds; ``MinerAcceptance`` refuses anything else.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Self

from pydantic import Field, model_validator

from ouroboros_gates.schemas._base import Record
from ouroboros_gates.schemas.common import (
    Arg,
    Digest,
    Fact,
    Identifier,
    MinerName,
    NonEmptyStr,
    RunId,
    Scope,
    Severity,
    Timestamp,
)

__all__ = [
    "Backtest",
    "BacktestSummary",
    "Finding",
    "LabelRow",
    "MinerAcceptance",
    "MutantOutcome",
    "MutantResult",
    "MutationOperator",
    "MutationReport",
]


class Finding(Record):
    """A verdict a miner's rule derived, with its subject and the facts that prove it."""

    miner: MinerName = Field(description="The miner that derived it, e.g. ``draft-pr-late``.")
    rule: Identifier = Field(description="The verdict predicate, e.g. ``invisible``.")
    subject: tuple[Arg, ...] = Field(description="The verdict's arguments, e.g. the run id.")
    severity: Severity = Field(description="S0 a gate escape … S3 found only by mining.")
    proof: tuple[Fact, ...] = Field(min_length=1, description="The facts the derivation used, with spans.")
    scope: Scope = Field(
        default=Scope.TENANT,
        description="The miner's scope at acceptance; tenant when unrecorded, so it never leaves the tenant.",
    )


class BacktestSummary(Record):
    """The counts of one backtest, as a README block or an acceptance shows them."""

    split_at: Timestamp = Field(description="The walk-forward split t.")
    kappa_star: float | None = Field(
        allow_inf_nan=False, description="The fitted knee κ*; None when no candidate has FN = 0."
    )
    families: int = Field(ge=0, description="|K|, the knee candidates tried (multiple testing made visible).")
    tp: int = Field(ge=0, description="True positives on the judged half.")
    fp: int = Field(ge=0, description="False positives on the judged half.")
    fn: int = Field(ge=0, description="False negatives (missed offenses) on the judged half.")
    pbo: float | None = Field(default=None, ge=0.0, le=1.0, description="Probability of overfitting.")
    pbo_status: NonEmptyStr = Field(description="How the PBO guard ended, e.g. ``waits for labels``.")


class Backtest(Record):
    """A walk-forward backtest of one miner (Bergmeir & Benítez 2012) with its PBO guard."""

    miner: MinerName = Field(description="The miner under test.")
    split_at: Timestamp = Field(description="t: labels starting at or before it fit, the rest are judged.")
    kappa_star: float | None = Field(
        allow_inf_nan=False,
        description="κ* = argmax precision on the fit half s.t. FN = 0, ties to the smallest; None if none.",
    )
    families: int = Field(ge=0, description="|K|, the number of knee candidates (the measured scores).")
    fit: tuple[NonEmptyStr, ...] = Field(description="Instances of the fit half, in start order.")
    judged: tuple[NonEmptyStr, ...] = Field(description="Instances of the judged half, in start order.")
    tp: tuple[NonEmptyStr, ...] = Field(default=(), description="Judged instances flagged and labelled +.")
    fp: tuple[NonEmptyStr, ...] = Field(default=(), description="Judged instances flagged and labelled -.")
    fn: tuple[NonEmptyStr, ...] = Field(default=(), description="Judged instances labelled + but missed.")
    lead_s: dict[str, Annotated[float, Field(allow_inf_nan=False)]] = Field(
        default_factory=dict,
        description="Per true positive with a flagged time: t_flag - (t_start + κ*), in seconds.",
    )
    pbo: float | None = Field(default=None, ge=0.0, le=1.0, description="PBO (Bailey et al. 2016) or None.")
    pbo_status: NonEmptyStr = Field(description="``computed``, or why not, e.g. ``waits for labels``.")

    @model_validator(mode="after")
    def _counts_are_judged(self) -> Self:
        judged = set(self.judged)
        outside = [i for i in (*self.tp, *self.fp, *self.fn) if i not in judged]
        if outside:
            raise ValueError(f"tp/fp/fn name instances outside the judged half: {sorted(set(outside))}")
        if set(self.fit) & judged:
            raise ValueError(f"instances in both halves: {sorted(set(self.fit) & judged)}")
        unknown = sorted(set(self.lead_s) - set(self.tp))
        if unknown:
            raise ValueError(f"lead times for instances that are not true positives: {unknown}")
        return self

    @property
    def passed(self) -> bool:
        """True when the judged half has no missed offense and, if the rule has a knee, one was fitted."""
        return not self.fn and (self.kappa_star is not None or self.families == 0)

    def summary(self) -> BacktestSummary:
        """The counts of this backtest."""
        return BacktestSummary(
            split_at=self.split_at,
            kappa_star=self.kappa_star,
            families=self.families,
            tp=len(self.tp),
            fp=len(self.fp),
            fn=len(self.fn),
            pbo=self.pbo,
            pbo_status=self.pbo_status,
        )


class MutationOperator(StrEnum):
    """One way a mutant changes a miner: its rule text or its labels, one change at a time."""

    DROP_LITERAL = "drop_literal"
    NEGATE_LITERAL = "negate_literal"
    SWAP_COMPARISON = "swap_comparison"
    KNEE_CONSTANT = "knee_constant"
    DROP_RULE = "drop_rule"
    FLIP_LABEL = "flip_label"


class MutantOutcome(StrEnum):
    """What the miner's checks made of a mutant."""

    KILLED = "killed"
    SURVIVED = "survived"
    REFUSED = "refused"
    EQUIVALENT = "equivalent"


class MutantResult(Record):
    """One mutant and its outcome; refused and equivalent mutants carry the reason they left the count."""

    operator: MutationOperator = Field(description="How the mutant was made.")
    description: NonEmptyStr = Field(description="The change, e.g. ``gt(S, K) -> gt(S, 468)``.")
    outcome: MutantOutcome = Field(description="killed | survived | refused | equivalent.")
    reason: str = Field(default="", description="Why it was refused or equivalent (required for those).")
    killed_by: tuple[NonEmptyStr, ...] = Field(default=(), description="The checks that failed on it.")
    changes_labelled_verdict: bool = Field(
        default=False, description="A survivor that changes a labelled instance's verdict fails the gate."
    )

    @model_validator(mode="after")
    def _reason_when_excluded(self) -> Self:
        excluded = self.outcome in (MutantOutcome.REFUSED, MutantOutcome.EQUIVALENT)
        if excluded and not self.reason:
            raise ValueError(f"a {self.outcome.value} mutant needs the reason it leaves the denominator")
        return self


class MutationReport(Record):
    """The mutation score of a miner's test: killed / (killed + survived), against the template's floor."""

    miner: MinerName = Field(description="The miner whose test was mutated.")
    mutants: tuple[MutantResult, ...] = Field(description="Every mutant tried, in order.")
    killed: int = Field(ge=0, description="Mutants the checks failed.")
    survived: int = Field(ge=0, description="Mutants the checks passed.")
    score: float | None = Field(ge=0.0, le=1.0, description="killed / (killed + survived); None if both 0.")
    floor: float = Field(ge=0.0, le=1.0, description="The template miner's measured score.")
    judged_on: tuple[NonEmptyStr, ...] = Field(
        default=(),
        description="The runs a rule mutant's verdicts were compared on to call it equivalent: every run the "
        "checks read (the fixtures, or the labelled ITEMs) and the corpus runs given beside them.",
    )

    @model_validator(mode="after")
    def _counts_match(self) -> Self:
        killed = sum(m.outcome is MutantOutcome.KILLED for m in self.mutants)
        survived = sum(m.outcome is MutantOutcome.SURVIVED for m in self.mutants)
        if (killed, survived) != (self.killed, self.survived):
            raise ValueError(f"counts say {self.killed}/{self.survived}, mutants say {killed}/{survived}")
        expected = killed / (killed + survived) if killed + survived else None
        if (expected is None) != (self.score is None) or (
            expected is not None and self.score is not None and abs(expected - self.score) > 1e-9
        ):
            raise ValueError(f"score {self.score} is not killed / (killed + survived) = {expected}")
        return self

    @property
    def holds(self) -> bool:
        """The gate: the score reaches the floor and no survivor changes a labelled verdict."""
        reaches = self.score is not None and self.score >= self.floor
        return reaches and not any(
            m.changes_labelled_verdict for m in self.mutants if m.outcome is MutantOutcome.SURVIVED
        )


class LabelRow(Record):
    """One row of a miner's ``labels.tsv``: instance, +/-, start, flagged time or -, source."""

    instance: NonEmptyStr = Field(description="The labelled instance (a run id, ``#226``, a commit).")
    positive: bool = Field(description="True for ``+`` (an offense), False for ``-``.")
    start: Timestamp = Field(description="When the instance started.")
    flagged: Timestamp | None = Field(default=None, description="When the operator flagged it, if ever.")
    source: NonEmptyStr = Field(description="Where the label came from (a ticket, a comment, the labeler).")


class MinerAcceptance(Record):
    """A miner accepted as a gate: its test passed, its backtest missed nothing, its mutation gate held."""

    miner: MinerName = Field(description="The accepted miner.")
    scope: Scope = Field(description="Decided at acceptance and carried on every finding.")
    backtest: BacktestSummary = Field(description="The backtest that accepted it.")
    mutation_score: float = Field(ge=0.0, le=1.0, description="Its test's mutation score.")
    mutation_floor: float = Field(ge=0.0, le=1.0, description="The floor the score was held to.")
    test_passed: bool = Field(description="Whether the miner's own test passed.")
    digest: Digest | None = Field(
        default=None,
        description="sha256 of the miner's files as judged (None on acceptances recorded without it).",
    )
    judged_runs: tuple[RunId, ...] = Field(
        default=(),
        description="The recorded runs its mutants were judged on, beside its fixtures (fleet acceptance).",
    )

    @model_validator(mode="after")
    def _only_when_it_passes(self) -> Self:
        why = [
            reason
            for reason, failed in (
                ("its test failed", not self.test_passed),
                ("no knee was fitted", self.backtest.kappa_star is None and self.backtest.families > 0),
                (f"backtest FN = {self.backtest.fn}", self.backtest.fn > 0),
                ("mutation score below the floor", self.mutation_score < self.mutation_floor),
            )
            if failed
        ]
        if why:
            raise ValueError(f"miner {self.miner!r} cannot be accepted: {'; '.join(why)}")
        return self

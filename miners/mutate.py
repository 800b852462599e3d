"""Mutation testing of a miner's own test (docs/loop.md, "Mutation test"): change the rules or the labels one
way at a time, rerun the checks (``miners.checks``) on each mutant, and count.

Operators (``miners.mutation_operators``): drop a body literal; negate an atom (``a`` ↔ ``!a``); swap a
comparison for its opposite (``gt`` ↔ ``le``, ``ge`` ↔ ``lt``, ``eq`` ↔ ``ne``: the negation of a builtin,
which the dialect cannot write with ``!``); replace the knee variable in a comparison by the fitted constant
(``gt(S, K)`` → ``gt(S, 468)``); drop a rule; flip one label. A mutant the checks fail is killed, one
they pass survived. Two kinds leave the denominator with their reason: a mutant ``check_rules``
refuses, and an equivalent rule mutant (the same verdicts as the original with no knee and at every
knee candidate, on every run it was judged on). A label mutant is never equivalent: its verdicts are the
original's by construction.

Equivalence judged on minimal fixtures alone is weak: a rule that flags every ``push`` is "equivalent" to
one that flags only the pushes refused for want of an upstream when the fixtures hold no other push. So
``mutate`` takes the miner's corpus too (``corpus``: the facts of real runs, ``ouro miner test NAME --runs
ITEM…``): a mutant whose verdicts differ from the original's on any of those runs is not equivalent, and
counts. ``MutationReport.judged_on`` names every run equivalence was judged on.

    score = killed / (killed + survived)

The gate (``MutationResult.rejections``): the original passes its checks, the score reaches
``TEMPLATE_FLOOR``, and no survivor changes a labelled instance's verdict (its flagged set at its own
κ* differs from the original's); a survivor is printed with its rules or labels. Mutants change rule
text and labels only: the facts are extracted once, and the extractor never runs again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ouroboros_gates.miners.backtest import BacktestResult, number
from ouroboros_gates.miners.checks import KNEE_BINDS, CheckRun, run_checks
from ouroboros_gates.miners.datalog import GroundAtom, Program, Value
from ouroboros_gates.miners.errors import RulesError
from ouroboros_gates.miners.findings import Extracted, judge
from ouroboros_gates.miners.labels import Labels
from ouroboros_gates.miners.mutation_operators import OPPOSITE, Mutant, mutant_text, mutants
from ouroboros_gates.miners.rules import check_program
from ouroboros_gates.schemas import MutantOutcome, MutantResult, MutationReport

__all__ = ["OPPOSITE", "TEMPLATE_FLOOR", "Mutant", "MutationResult", "mutant_text", "mutants", "mutate"]

TEMPLATE_FLOOR = 1.0
"""The template miner's measured mutation score: the floor every miner's score must reach. It is
derived, not picked: ``tests/miners/template`` measures the template and fails when this differs."""

_NAMED_RUNS = 10


@dataclass(frozen=True)
class MutationResult:
    """The mutation report, the original's own check run, and each mutant beside its result."""

    report: MutationReport
    original: CheckRun
    tried: tuple[tuple[Mutant, MutantResult], ...]
    corpus_runs: tuple[str, ...] = ()
    """The corpus runs equivalence was judged on beside the runs the checks read."""
    checked_runs: int = 0
    """How many runs the checks read (the fixtures, or the labelled ITEMs)."""

    @property
    def survivors(self) -> list[tuple[Mutant, MutantResult]]:
        return [(m, r) for m, r in self.tried if r.outcome is MutantOutcome.SURVIVED]

    def rejections(self) -> list[str]:
        """Why the gate fails (empty when it holds)."""
        return [*self._original_fails(), *self._score_low(), *self._labelled_survivors()]

    def _original_fails(self) -> list[str]:
        if self.original.refused or self.original.failed:
            return [
                f"the miner fails its own checks: {self.original.refused or ', '.join(self.original.failed)}"
            ]
        return []

    def _score_low(self) -> list[str]:
        score = self.report.score
        if score is None or score < self.report.floor:
            shown = "none (no mutant counted)" if score is None else f"{score:.2f}"
            return [f"mutation score {shown} is below the floor {self.report.floor:.2f}"]
        return []

    def _labelled_survivors(self) -> list[str]:
        return [
            f"survivor changes a labelled verdict: {mutant.operator.value} {mutant.description}"
            for mutant, result in self.survivors
            if result.changes_labelled_verdict
        ]

    @property
    def holds(self) -> bool:
        return not self.rejections()

    def only_knee_binds(self) -> list[tuple[int, Mutant]]:
        """The killed mutants (1-based number, mutant) that only the knee-binds check kills."""
        return [
            (number, mutant)
            for number, (mutant, result) in enumerate(self.tried, start=1)
            if result.outcome is MutantOutcome.KILLED and result.killed_by == (KNEE_BINDS,)
        ]

    def markdown(self) -> str:
        """The mutation block: the score, the gate, and one row per mutant with its outcome."""
        report = self.report
        counts = {outcome: sum(r.outcome is outcome for r in report.mutants) for outcome in MutantOutcome}
        score = "none" if report.score is None else f"{report.score:.2f}"
        lines = [
            f"| Mutation | {report.miner} |",
            "| --- | --- |",
            f"| Mutation score | {score} (killed / (killed + survived) = {report.killed} / "
            f"{report.killed + report.survived}) |",
            f"| Mutation floor | {report.floor:.2f} (the template miner's measured score) |",
            f"| Mutants | {len(report.mutants)}: {counts[MutantOutcome.KILLED]} killed, "
            f"{counts[MutantOutcome.SURVIVED]} survived, "
            f"{counts[MutantOutcome.REFUSED]} refused by check_rules, "
            f"{counts[MutantOutcome.EQUIVALENT]} equivalent |",
            f"| Mutation gate | {self._gate()} |",
            f"| Equivalence judged on | {self.judged_on_text()} |",
            "",
            "| # | operator | change | outcome | killed by, or why it leaves the denominator |",
            "| --- | --- | --- | --- | --- |",
        ]
        lines += [_mutant_row(position, *tried) for position, tried in enumerate(self.tried, start=1)]
        lines += ["", *self._knee_note(), *self._survivor_texts()]
        return "\n".join(lines).rstrip("\n") + "\n"

    def _gate(self) -> str:
        return "holds" if self.holds else "fails: " + "; ".join(self.rejections())

    def judged_on_text(self) -> str:
        """On which runs a rule mutant was judged equivalent or not: those the checks read, and the corpus."""
        read = self.checked_runs
        if not self.corpus_runs:
            return (
                f"the {read} run(s) the checks read, no corpus (`ouro miner test NAME --runs ITEM…` adds one)"
            )
        shown = ", ".join(self.corpus_runs[:_NAMED_RUNS])
        more = (
            f" and {len(self.corpus_runs) - _NAMED_RUNS} more" if len(self.corpus_runs) > _NAMED_RUNS else ""
        )
        return f"the {read} run(s) the checks read and {len(self.corpus_runs)} corpus run(s): {shown}{more}"

    def _survivor_texts(self) -> list[str]:
        """Each survivor with the rules or the label row that survived, to strengthen against."""
        found: list[str] = []
        for position, (mutant, result) in enumerate(self.tried, start=1):
            if result.outcome is MutantOutcome.SURVIVED:
                found += [
                    "",
                    f"Survivor #{position} ({mutant.description}):",
                    "",
                    "```",
                    *mutant_text(mutant).splitlines(),
                    "```",
                ]
        return found

    def _knee_note(self) -> list[str]:
        only = self.only_knee_binds()
        if not only:
            return []
        listed = ", ".join(f"#{number} ({mutant.description})" for number, mutant in only)
        return [f"The knee-binds check is the only check that kills {listed}: every other check passes it."]


def _mutant_row(position: int, mutant: Mutant, result: MutantResult) -> str:
    """A mutant's row of the mutation block: what changed, its outcome, and what killed it or why it does not
    count."""
    why = ", ".join(result.killed_by) if result.killed_by else result.reason
    if result.changes_labelled_verdict:
        why = "changes a labelled verdict"
    change = mutant.description.replace("|", "\\|")
    return f"| {position} | {mutant.operator.value} | {change} | {result.outcome.value} | {why} |"


Judged = tuple[frozenset[GroundAtom], ...]


@dataclass(frozen=True)
class _Corpus:
    """The corpus runs equivalence is judged on beside the labelled ones, and the original's verdicts
    there."""

    extracted: Extracted
    verdicts: Sequence[str]
    knees: tuple[Value | None, ...]
    original: Judged | None

    def differs(self, program: Program) -> bool:
        """Whether ``program`` derives other verdicts than the original on these runs, at any knee."""
        return _verdicts_on(self, program) != self.original


def _verdicts_on(corpus: _Corpus, program: Program) -> Judged | None:
    try:
        rules = check_program(program)
    except RulesError:
        return None
    return tuple(judge(rules, corpus.verdicts, corpus.extracted, knee).atoms for knee in corpus.knees)


def _equivalent(mutant: Mutant, run: CheckRun, original: CheckRun, corpus: _Corpus | None) -> str | None:
    if run.result is None or original.result is None or not _same_verdicts(run.result, original.result):
        return None
    if corpus is not None and corpus.differs(mutant.program):
        return None  # the same on the labelled runs, but not on real ones
    return _equivalence(original.result, corpus)


def _equivalence(original: BacktestResult, corpus: _Corpus | None) -> str:
    """Why an equivalent mutant does not count: the knees and the runs its verdicts were compared at."""
    knees = ", ".join(number(k) for k in original.candidates)
    runs = f"{len(corpus.extracted.instances)} corpus run(s)" if corpus is not None else ""
    where = f", on the labelled runs and {runs}" if runs else ""
    return f"same verdicts as the original with no knee and at every candidate ({{{knees}}}){where}"


def _same_verdicts(mine: BacktestResult, theirs: BacktestResult) -> bool:
    """Whether two backtests derived the same verdicts with no knee and at every candidate."""
    found, expected = mine.verdicts, theirs.verdicts
    return found.keys() == expected.keys() and all(found[k].atoms == expected[k].atoms for k in found)


def _judge(mutant: Mutant, run: CheckRun, original: CheckRun, corpus: _Corpus | None = None) -> MutantResult:
    base = {"operator": mutant.operator, "description": mutant.description}
    if run.refused is not None:
        return MutantResult(**base, outcome=MutantOutcome.REFUSED, reason=f"check_rules: {run.refused}")
    equivalent = _equivalent(mutant, run, original, corpus) if mutant.changes_rules else None
    if equivalent is not None:
        return MutantResult(**base, outcome=MutantOutcome.EQUIVALENT, reason=equivalent)
    if run.failed:
        return MutantResult(**base, outcome=MutantOutcome.KILLED, killed_by=run.failed)
    changed = _changes_labelled_verdict(mutant, run, original)
    return MutantResult(**base, outcome=MutantOutcome.SURVIVED, changes_labelled_verdict=changed)


def _changes_labelled_verdict(mutant: Mutant, run: CheckRun, original: CheckRun) -> bool:
    """Whether a survivor flags another set of labelled instances at its κ* than the original at its own."""
    assert run.result is not None and original.result is not None
    labelled = {row.instance for row in mutant.labels.rows}
    return run.result.at_kappa.flagged & labelled != original.result.at_kappa.flagged & labelled


def mutate(
    miner: str,
    program: Program,
    verdicts: Sequence[str],
    labels: Labels,
    extracted: Extracted,
    corpus: Extracted | None = None,
) -> MutationResult:
    """Mutation-test the checks of ``program`` and ``labels`` over the extracted facts; a rule mutant
    is equivalent only if its verdicts match the original's on every extracted run and every ``corpus``
    run."""
    original = run_checks(miner, program, verdicts, labels, extracted)
    kappa, knees = _knees(original)
    real = _real_corpus(corpus, verdicts, knees, program)
    tried = []
    for mutant in mutants(program, labels, kappa):
        run = run_checks(miner, mutant.program, verdicts, mutant.labels, extracted)
        tried.append((mutant, _judge(mutant, run, original, real)))
    corpus_runs = corpus.instances if corpus else ()
    judged_on = tuple(dict.fromkeys((*extracted.instances, *corpus_runs)))
    report = _report(miner, tuple(result for _mutant, result in tried), judged_on)
    return MutationResult(report, original, tuple(tried), corpus_runs, len(extracted.instances))


def _knees(original: CheckRun) -> tuple[Value | None, tuple[Value | None, ...]]:
    """The original's κ*, and the knees its verdicts are compared at: none, then every candidate."""
    if original.result is None:
        return None, (None,)
    return original.result.kappa_star, (None, *original.result.candidates)


def _real_corpus(
    corpus: Extracted | None, verdicts: Sequence[str], knees: tuple[Value | None, ...], program: Program
) -> _Corpus | None:
    """The corpus runs with the original program's verdicts there, or None when there are none."""
    if corpus is None or not corpus.instances:
        return None
    real = _Corpus(corpus, verdicts, knees, None)
    return replace(real, original=_verdicts_on(real, program))


def _report(miner: str, results: tuple[MutantResult, ...], judged_on: tuple[str, ...]) -> MutationReport:
    killed = sum(r.outcome is MutantOutcome.KILLED for r in results)
    survived = sum(r.outcome is MutantOutcome.SURVIVED for r in results)
    return MutationReport(
        miner=miner,
        mutants=results,
        killed=killed,
        survived=survived,
        score=killed / (killed + survived) if killed + survived else None,
        floor=TEMPLATE_FLOOR,
        judged_on=judged_on,
    )

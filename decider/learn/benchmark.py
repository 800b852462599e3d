"""A labelled benchmark scored end to end: each case file is scanned as ``ouro scan`` reads a folder, the
decider at $0 (the memory-vote program, no chat model) decides it on grouped folds that never saw the case,
and the instruments alone are scored on the same cases beside it.

The cases come from an expected-results CSV (``benchmark_cases``); the methods scored beside the decider,
their bootstrap intervals and the report are in ``benchmark_methods``, ``benchmark_stats`` and
``benchmark_report``. Each case is its own
group: the memory a fold decides with holds the other folds' cases (and any extra memory given), never
its own. A case is flagged when a candidate of its family reaches ADVISORY, the threshold reaching recall
0.90 on the other folds' cases (per family at >= 20 positive and 20 negative cases, else pooled); a case
with no candidate of its family is a reach miss (not flagged).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from ouroboros_gates.decider.analyse import Analysed, analyse_folder
from ouroboros_gates.decider.decide import Engine, decide_all
from ouroboros_gates.decider.embed import HashingEmbedder
from ouroboros_gates.decider.folder import read_folder
from ouroboros_gates.decider.frameworks import Priors
from ouroboros_gates.decider.learn.benchmark_cases import Case, family_candidates, load_cases
from ouroboros_gates.decider.learn.benchmark_methods import DESCRIBED, methods
from ouroboros_gates.decider.learn.benchmark_report import render_benchmark
from ouroboros_gates.decider.learn.benchmark_stats import by_family, summary
from ouroboros_gates.decider.learn.folds import seeded_order
from ouroboros_gates.decider.memory import Memory, MemoryExample, MemoryRefused, example_from_record
from ouroboros_gates.decider.program import Program
from ouroboros_gates.decider.retrieve import Boundary

__all__ = [
    "Case",
    "analyse_cases",
    "benchmark_memory",
    "evaluate_benchmark",
    "load_cases",
    "render_benchmark",
]

FLOOR = 20
"""Positive and negative cases a family needs in the other folds for its own threshold."""

RECALL_TARGET = 0.90
SOURCE = "benchmark"

Analysis = tuple[str, list[Analysed], list[dict[str, str]]]
"""A case's name, what its file's scan found, and what the scan skipped."""


def _analyse_one(args: tuple[str, str, str, Priors]) -> Analysis:
    root, path, name, priors = args
    scan = read_folder([Path(root) / path], Path(root))
    return name, analyse_folder(scan, f"case/{name}", priors=priors), [s.as_dict() for s in scan.skipped]


def analyse_cases(
    cases: Sequence[Case],
    benchmark: Path,
    *,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    priors: Priors = "detected",
) -> tuple[dict[str, list[Analysed]], list[dict[str, str]]]:
    """Every case file analysed as a folder scan of that one file (``jobs`` processes, ``priors`` on); what
    was skipped."""
    work = [(str(benchmark.resolve()), c.path, c.name, priors) for c in cases]
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            return _collect(pool.map(_analyse_one, work, chunksize=32), len(work), progress)
    return _collect((_analyse_one(item) for item in work), len(work), progress)


def _collect(
    results: Iterable[Analysis], total: int, progress: Callable[[int, int], None] | None
) -> tuple[dict[str, list[Analysed]], list[dict[str, str]]]:
    """The analyses by case name and everything skipped, reporting progress as each case arrives."""
    analysed: dict[str, list[Analysed]] = {}
    skipped: list[dict[str, str]] = []
    for i, (name, items, skips) in enumerate(results, start=1):
        analysed[name] = items
        skipped.extend(skips)
        if progress is not None:
            progress(i, total)
    return analysed, skipped


def benchmark_memory(cases: Sequence[Case], analysed: Mapping[str, list[Analysed]]) -> list[MemoryExample]:
    """An example per candidate of the case's family, labelled with the case (other families: unlabelled)."""
    examples = []
    for case in cases:
        for item in family_candidates(case, analysed):
            example = _example(case, item)
            if example is not None:
                examples.append(example)
    return examples


def _example(case: Case, item: Analysed) -> MemoryExample | None:
    """A candidate as a memory example labelled with its case; None where the memory refuses it."""
    try:
        return example_from_record(
            item.record,
            y=1 if case.y else 0,
            code=item.code,
            start_line=item.start_line,
            source=SOURCE,
            group=case.group,
            focus=[s.line for s in item.signals],
            roles=item.roles,
        )
    except MemoryRefused:
        return None


def _folds(cases: Sequence[Case], k: int, seed: int) -> list[list[Case]]:
    """Grouped K folds (a case is a group), stratified by family and label, dealt in a seeded order."""
    folds: list[list[Case]] = [[] for _ in range(k)]
    by_stratum = _strata(cases)
    turn = 0
    for stratum in sorted(by_stratum):
        members = {c.name: c for c in by_stratum[stratum]}
        for name in seeded_order(members, seed, salt=f"benchmark:{stratum[0]}:{stratum[1]}"):
            folds[turn % k].append(members[name])
            turn += 1
    return folds


def _strata(cases: Sequence[Case]) -> dict[tuple[str, int], list[Case]]:
    """The cases by family and label."""
    by_stratum: dict[tuple[str, int], list[Case]] = {}
    for case in cases:
        by_stratum.setdefault((case.family, case.y), []).append(case)
    return by_stratum


def _scores(
    fold: Sequence[Case],
    analysed: Mapping[str, list[Analysed]],
    memory: Memory,
    program: Program,
    embedder: HashingEmbedder,
) -> dict[str, float | None]:
    """The case's score: the highest raw score among its family's candidates (None: a reach miss)."""
    memory.embed(embedder)
    held_out = frozenset(c.group for c in fold)
    engine = Engine(
        program=program,
        memory=memory,
        columns=_columns(),
        embedder=embedder,
        boundary=Boundary(mode="evaluation", evaluation_groups=held_out),
    )
    return {case.name: _case_score(case, analysed, engine) for case in fold}


def _case_score(case: Case, analysed: Mapping[str, list[Analysed]], engine: Engine) -> float | None:
    """The highest raw score the engine gives a candidate of the case's family (None: none, or unscored)."""
    items = family_candidates(case, analysed)
    if not items:
        return None
    engine.repo_group = case.group
    run = decide_all(items, engine)
    raw = [d.raw_score for d in run.decided if d.raw_score is not None]
    return max(raw) if raw else None


def _columns() -> Any:
    from ouroboros_gates.decider.learn.programs import default_columns

    return default_columns()


def _advisory(rows: Sequence[tuple[float | None, int]]) -> float:
    """The highest threshold whose recall over these cases (reach misses count) is >= 0.90; else the lowest
    score seen (every case with a candidate flagged)."""
    positives = _positive_scores(rows)
    total = _positives(rows)
    needed = int(np.ceil(RECALL_TARGET * total))
    if total and needed <= len(positives):
        return positives[needed - 1]
    return _lowest(rows)


def _positive_scores(rows: Sequence[tuple[float | None, int]]) -> list[float]:
    """The positive cases' scores, highest first (reach misses have none)."""
    return sorted((s for s, y in rows if y == 1 and s is not None), reverse=True)


def _positives(rows: Sequence[tuple[float | None, int]]) -> int:
    """How many cases are positive, reach misses included."""
    return sum(1 for _, y in rows if y == 1)


def _lowest(rows: Sequence[tuple[float | None, int]]) -> float:
    seen = [s for s, _ in rows if s is not None]
    return min(seen) if seen else 1.0


def _thresholds(train: Sequence[Case], scores: Mapping[str, float | None]) -> dict[str, float]:
    """The pooled threshold as ``*``, and a family's own where it has enough cases of each label."""
    found = {"*": _advisory(_scored(train, scores))}
    for family in sorted({c.family for c in train}):
        mine = _of_family(train, family)
        if _has_floor(mine):
            found[family] = _advisory(_scored(mine, scores))
    return found


def _of_family(cases: Sequence[Case], family: str) -> list[Case]:
    """The cases of one family."""
    return [c for c in cases if c.family == family]


def _scored(cases: Sequence[Case], scores: Mapping[str, float | None]) -> list[tuple[float | None, int]]:
    """Each case's score with its label."""
    return [(scores[c.name], c.y) for c in cases]


def _has_floor(cases: Sequence[Case]) -> bool:
    positive = sum(c.y for c in cases)
    return positive >= FLOOR and len(cases) - positive >= FLOOR


def evaluate_benchmark(
    cases: Sequence[Case],
    analysed: Mapping[str, list[Analysed]],
    program: Program,
    *,
    extra: Memory | None = None,
    k: int = 5,
    seed: int = 0,
    resamples: int = 2000,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Scores on grouped folds, thresholds from the other folds, and the instruments alone beside them."""
    folds = _folds(cases, k, seed)
    examples = benchmark_memory(cases, analysed)
    embedder = HashingEmbedder()
    scores = _out_of_fold(folds, analysed, examples, extra, program, embedder, progress)
    flagged, thresholds = _flagged(folds, scores)
    found = methods(cases, analysed, flagged)
    y = np.array([c.y for c in cases], dtype=np.int8)
    return {
        "program": _described_program(program, embedder),
        "folds": k,
        "seed": seed,
        "resamples": resamples,
        "thresholds": thresholds,
        "memory": {
            "benchmark_examples": len(examples),
            "extra_examples": len(extra) if extra is not None else 0,
        },
        "reach": _reach(cases, analysed),
        "methods": DESCRIBED,
        "overall": summary(y, dict(found), resamples, seed, "decider", "instruments"),
        "by_family": by_family(cases, y, found, resamples, seed),
    }


def _out_of_fold(
    folds: Sequence[Sequence[Case]],
    analysed: Mapping[str, list[Analysed]],
    examples: Sequence[MemoryExample],
    extra: Memory | None,
    program: Program,
    embedder: HashingEmbedder,
    progress: Callable[[int, int], None] | None,
) -> dict[str, float | None]:
    """Every case's score from the memory outside its fold, reporting progress a fold at a time."""
    scores: dict[str, float | None] = {}
    for j, fold in enumerate(folds, start=1):
        memory = _fold_memory(examples, extra, {c.group for c in fold})
        scores |= _scores(fold, analysed, memory, program, embedder)
        if progress is not None:
            progress(j, len(folds))
    return scores


def _described_program(program: Program, embedder: HashingEmbedder) -> dict[str, Any]:
    """The program decided with, and the embedding its memory was read with."""
    return {
        "kind": program.kind,
        "id": program.program_id,
        "retrieval": dict(program.retrieval),
        "embedding": embedder.model,
    }


def _reach(cases: Sequence[Case], analysed: Mapping[str, list[Analysed]]) -> dict[str, int]:
    """How many cases (and positive cases) have a candidate of their family at all."""
    reached = [c for c in cases if family_candidates(c, analysed)]
    return {
        "cases_with_a_candidate_of_their_family": len(reached),
        "positives_reached": sum(1 for c in reached if c.y),
    }


def _fold_memory(examples: Sequence[MemoryExample], extra: Memory | None, held: set[str]) -> Memory:
    """What a fold decides with: the other folds' cases, and the extra memory outside its groups."""
    memory = Memory(_outside(examples, held))
    if extra is None:
        return memory
    return memory.merged(Memory(_outside(extra.examples, held)))


def _outside(examples: Iterable[MemoryExample], held: set[str]) -> list[MemoryExample]:
    """The examples of no held-out group."""
    return [e for e in examples if e.group not in held]


def _flagged(
    folds: Sequence[Sequence[Case]], scores: Mapping[str, float | None]
) -> tuple[dict[str, bool], list[dict[str, float]]]:
    """Whether each case reaches its threshold set on the other folds; each fold's thresholds."""
    flagged: dict[str, bool] = {}
    thresholds: list[dict[str, float]] = []
    for fold in folds:
        points = _thresholds(_other_folds(folds, fold), scores)
        thresholds.append({f: round(t, 4) for f, t in points.items()})
        flagged |= {case.name: _reaches(scores[case.name], points, case.family) for case in fold}
    return flagged, thresholds


def _other_folds(folds: Sequence[Sequence[Case]], fold: Sequence[Case]) -> list[Case]:
    """The cases of every fold but this one."""
    return [c for other in folds if other is not fold for c in other]


def _reaches(score: float | None, points: Mapping[str, float], family: str) -> bool:
    """Whether a score reaches its family's threshold (else the pooled one); a reach miss never does."""
    return score is not None and score >= points.get(family, points["*"])

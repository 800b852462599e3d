"""A labelled benchmark scored end to end: each case file is scanned as ``ouro scan`` reads a folder, the
decider at $0 (the memory-vote program, no chat model) decides it on grouped folds that never saw the case,
and the instruments alone are scored on the same cases beside it.

The expected-results file is CSV: ``name, category, real (true/false), cwe`` per case (lines starting with
``#`` are comments), the OWASP Benchmark's ``expectedresults-*.csv`` shape. A case is the one file under
the benchmark folder whose stem is its name; its family is the family of its CWE. Each case is its own
group: the memory a fold decides with holds the other folds' cases (and any extra memory given), never
its own. A case is flagged when a candidate of its family reaches ADVISORY, the threshold reaching recall
0.90 on the other folds' cases (per family at >= 20 positive and 20 negative cases, else pooled); a case
with no candidate of its family is a reach miss (not flagged).
"""

from __future__ import annotations

import csv
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ouroboros_gates.decider.analyse import Analysed, analyse_folder
from ouroboros_gates.decider.decide import Engine, decide_all
from ouroboros_gates.decider.embed import HashingEmbedder
from ouroboros_gates.decider.folder import read_folder
from ouroboros_gates.decider.frameworks import Priors
from ouroboros_gates.decider.instruments import families
from ouroboros_gates.decider.languages import language_of
from ouroboros_gates.decider.learn.folds import seeded_order
from ouroboros_gates.decider.memory import Memory, MemoryExample, MemoryRefused, example_from_record
from ouroboros_gates.decider.program import Program
from ouroboros_gates.decider.retrieve import Boundary
from ouroboros_gates.schemas.errors import OuroError

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


@dataclass(frozen=True)
class Case:
    """One labelled case: its name, file (relative to the benchmark folder), category, family and label."""

    name: str
    path: str
    category: str
    family: str
    y: int

    @property
    def group(self) -> str:
        """Each case is its own repository group."""
        return f"case/{self.name}"


def load_cases(benchmark: Path, expected: Path) -> list[Case]:
    """The cases of an expected-results CSV, each matched to its file; a bad row is one error naming it."""
    if not benchmark.is_dir():
        raise OuroError(f"--benchmark: {benchmark}: no such directory")
    try:
        text = expected.read_text(encoding="utf-8")
    except OSError as exc:
        raise OuroError(f"--expected: {expected}: {exc.strerror or exc}") from exc
    files = _case_files(benchmark)
    cases = [
        _case(row, f"{expected}:{number}", files, benchmark)
        for number, row in enumerate(csv.reader(text.splitlines()), start=1)
        if row and not row[0].lstrip().startswith("#")
    ]
    if not cases:
        raise OuroError(f"--expected: {expected}: no case")
    return cases


def _case_files(benchmark: Path) -> dict[str, Path]:
    """The source files under the benchmark folder by stem (the first in sorted order wins)."""
    files: dict[str, Path] = {}
    for path in sorted(benchmark.rglob("*")):
        if path.is_file() and language_of(path.name) is not None:
            files.setdefault(path.stem, path)
    return files


def _case(row: Sequence[str], where: str, files: Mapping[str, Path], benchmark: Path) -> Case:
    """One row of the expected results (``where``: the file and line), matched to its file."""
    if len(row) < 4:
        raise OuroError(f"{where}: expected name, category, real, cwe; got {len(row)} field(s)")
    name, category, real, cwe = (field.strip() for field in row[:4])
    if real.lower() not in ("true", "false"):
        raise OuroError(f"{where}: real vulnerability {real!r} is not true or false")
    try:
        family = families().for_cwe(int(cwe))
    except ValueError as exc:
        raise OuroError(f"{where}: cwe {cwe!r} is not a number") from exc
    if family is None:
        raise OuroError(f"{where}: CWE {cwe} maps to no family in ruleset/families.toml")
    found = files.get(name)
    if found is None:
        raise OuroError(f"{where}: no source file named {name}.* under {benchmark}")
    label = int(real.lower() == "true")
    return Case(name, found.relative_to(benchmark).as_posix(), category, family, label)


def _analyse_one(args: tuple[str, str, str, Priors]) -> tuple[str, list[Analysed], list[dict[str, str]]]:
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
    analysed: dict[str, list[Analysed]] = {}
    skipped: list[dict[str, str]] = []
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = pool.map(_analyse_one, work, chunksize=32)
            for i, (name, items, skips) in enumerate(results, start=1):
                analysed[name] = items
                skipped.extend(skips)
                if progress is not None:
                    progress(i, len(work))
    else:
        for i, item in enumerate(work, start=1):
            name, items, skips = _analyse_one(item)
            analysed[name] = items
            skipped.extend(skips)
            if progress is not None:
                progress(i, len(work))
    return analysed, skipped


def _mine(case: Case, analysed: Mapping[str, list[Analysed]]) -> list[Analysed]:
    return [a for a in analysed.get(case.name, []) if a.candidate.family == case.family]


def benchmark_memory(cases: Sequence[Case], analysed: Mapping[str, list[Analysed]]) -> list[MemoryExample]:
    """An example per candidate of the case's family, labelled with the case (other families: unlabelled)."""
    examples = []
    for case in cases:
        for item in _mine(case, analysed):
            try:
                examples.append(
                    example_from_record(
                        item.record,
                        y=1 if case.y else 0,
                        code=item.code,
                        start_line=item.start_line,
                        source=SOURCE,
                        group=case.group,
                        focus=[s.line for s in item.signals],
                        roles=item.roles,
                    )
                )
            except MemoryRefused:
                continue
    return examples


def _folds(cases: Sequence[Case], k: int, seed: int) -> list[list[Case]]:
    """Grouped K folds (a case is a group), stratified by family and label, dealt in a seeded order."""
    folds: list[list[Case]] = [[] for _ in range(k)]
    by_stratum: dict[tuple[str, int], list[Case]] = {}
    for case in cases:
        by_stratum.setdefault((case.family, case.y), []).append(case)
    turn = 0
    for stratum in sorted(by_stratum):
        members = {c.name: c for c in by_stratum[stratum]}
        for name in seeded_order(members, seed, salt=f"benchmark:{stratum[0]}:{stratum[1]}"):
            folds[turn % k].append(members[name])
            turn += 1
    return folds


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
    scores: dict[str, float | None] = {}
    for case in fold:
        items = _mine(case, analysed)
        if not items:
            scores[case.name] = None
            continue
        engine.repo_group = case.group
        run = decide_all(items, engine)
        raw = [d.raw_score for d in run.decided if d.raw_score is not None]
        scores[case.name] = max(raw) if raw else None
    return scores


def _columns() -> Any:
    from ouroboros_gates.decider.learn.programs import default_columns

    return default_columns()


def _advisory(rows: Sequence[tuple[float | None, int]]) -> float:
    """The highest threshold whose recall over these cases (reach misses count) is >= 0.90; else the lowest
    score seen (every case with a candidate flagged)."""
    positives = sorted((s for s, y in rows if y == 1 and s is not None), reverse=True)
    total = sum(1 for _, y in rows if y == 1)
    needed = int(np.ceil(RECALL_TARGET * total))
    if total and needed <= len(positives):
        return positives[needed - 1]
    return _lowest(rows)


def _lowest(rows: Sequence[tuple[float | None, int]]) -> float:
    seen = [s for s, _ in rows if s is not None]
    return min(seen) if seen else 1.0


def _thresholds(train: Sequence[Case], scores: Mapping[str, float | None]) -> dict[str, float]:
    """The pooled threshold as ``*``, and a family's own where it has enough cases of each label."""
    found = {"*": _advisory([(scores[c.name], c.y) for c in train])}
    for family in sorted({c.family for c in train}):
        mine = [c for c in train if c.family == family]
        if _has_floor(mine):
            found[family] = _advisory([(scores[c.name], c.y) for c in mine])
    return found


def _has_floor(cases: Sequence[Case]) -> bool:
    positive = sum(c.y for c in cases)
    return positive >= FLOOR and len(cases) - positive >= FLOOR


def _rates(y: NDArray[np.int8], hit: NDArray[np.bool_], idx: NDArray[np.intp]) -> NDArray[np.float64]:
    """TPR, FPR, J and precision for each row of bootstrap indexes ``idx`` (shape resamples x n)."""
    ys, hs = y[idx], hit[idx]
    tp = (hs & (ys == 1)).sum(axis=-1).astype(float)
    fp = (hs & (ys == 0)).sum(axis=-1).astype(float)
    pos = (ys == 1).sum(axis=-1).astype(float)
    neg = (ys == 0).sum(axis=-1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr, fpr = tp / pos, fp / neg
        precision = tp / (tp + fp)
    return np.stack([tpr, fpr, tpr - fpr, precision], axis=-1)


_STATS = ("tpr", "fpr", "j", "precision")


def _summary(
    y: NDArray[np.int8],
    methods: Mapping[str, NDArray[np.bool_]],
    resamples: int,
    seed: int,
    reference: str,
    peer: str,
) -> dict[str, Any]:
    n = len(y)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n)) if n else np.zeros((resamples, 0), dtype=np.intp)
    whole = np.arange(n)[None, :]
    out: dict[str, Any] = {"cases": n, "positive": int(y.sum()), "negative": int(n - y.sum())}
    boot: dict[str, NDArray[np.float64]] = {}
    for name, hit in methods.items():
        point = _rates(y, hit, whole)[0]
        boot[name] = _rates(y, hit, idx)
        with warnings.catch_warnings():  # precision is undefined in a resample that flags nothing
            warnings.simplefilter("ignore", RuntimeWarning)
            low = np.nanpercentile(boot[name], 2.5, axis=0)
            high = np.nanpercentile(boot[name], 97.5, axis=0)
        out[name] = {stat: _interval(point[i], low[i], high[i]) for i, stat in enumerate(_STATS)}
    diff = boot[reference][:, 2] - boot[peer][:, 2]
    point = out[reference]["j"]["value"], out[peer]["j"]["value"]
    out["j_difference"] = {
        "of": f"{reference} - {peer}",
        **_interval(None if None in point else point[0] - point[1], *np.nanpercentile(diff, [2.5, 97.5])),
    }
    return out


def _interval(value: float | None, low: float, high: float) -> dict[str, float | None]:
    def r(x: float | None) -> float | None:
        return None if x is None or not np.isfinite(x) else round(float(x), 3)

    return {"value": r(value), "low": r(low), "high": r(high)}


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
    scores: dict[str, float | None] = {}
    for j, fold in enumerate(folds, start=1):
        memory = _fold_memory(examples, extra, {c.group for c in fold})
        scores |= _scores(fold, analysed, memory, program, embedder)
        if progress is not None:
            progress(j, len(folds))
    flagged, thresholds = _flagged(folds, scores)
    methods = _methods(cases, analysed, flagged)
    y = np.array([c.y for c in cases], dtype=np.int8)
    return {
        "program": {
            "kind": program.kind,
            "id": program.program_id,
            "retrieval": dict(program.retrieval),
            "embedding": embedder.model,
        },
        "folds": k,
        "seed": seed,
        "resamples": resamples,
        "thresholds": thresholds,
        "memory": {
            "benchmark_examples": len(examples),
            "extra_examples": len(extra) if extra is not None else 0,
        },
        "reach": _reach(cases, analysed),
        "methods": _DESCRIBED,
        "overall": _summary(y, dict(methods), resamples, seed, "decider", "instruments"),
        "by_family": _by_family(cases, y, methods, resamples, seed),
    }


def _reach(cases: Sequence[Case], analysed: Mapping[str, list[Analysed]]) -> dict[str, int]:
    """How many cases (and positive cases) have a candidate of their family at all."""
    return {
        "cases_with_a_candidate_of_their_family": sum(1 for c in cases if _mine(c, analysed)),
        "positives_reached": sum(1 for c in cases if c.y and _mine(c, analysed)),
    }


def _fold_memory(examples: Sequence[MemoryExample], extra: Memory | None, held: set[str]) -> Memory:
    """What a fold decides with: the other folds' cases, and the extra memory outside its groups."""
    memory = Memory([e for e in examples if e.group not in held])
    if extra is None:
        return memory
    return memory.merged(Memory(e for e in extra.examples if e.group not in held))


def _flagged(
    folds: Sequence[Sequence[Case]], scores: Mapping[str, float | None]
) -> tuple[dict[str, bool], list[dict[str, float]]]:
    """Whether each case reaches its threshold set on the other folds; each fold's thresholds."""
    flagged: dict[str, bool] = {}
    thresholds: list[dict[str, float]] = []
    for fold in folds:
        train = [c for other in folds if other is not fold for c in other]
        points = _thresholds(train, scores)
        thresholds.append({f: round(t, 4) for f, t in points.items()})
        for case in fold:
            score = scores[case.name]
            flagged[case.name] = score is not None and score >= points.get(case.family, points["*"])
    return flagged, thresholds


def _by_family(
    cases: Sequence[Case],
    y: NDArray[np.int8],
    methods: Mapping[str, NDArray[np.bool_]],
    resamples: int,
    seed: int,
) -> dict[str, dict[str, Any]]:
    """The summary of each family's cases, with the benchmark categories they come from."""
    out: dict[str, dict[str, Any]] = {}
    for family in sorted({c.family for c in cases}):
        pick = np.array([c.family == family for c in cases])
        out[family] = _summary(
            y[pick], {m: v[pick] for m, v in methods.items()}, resamples, seed, "decider", "instruments"
        )
        out[family]["categories"] = sorted({c.category for c in cases if c.family == family})
    return out


_DESCRIBED = {
    "decider": "the memory-vote program at $0: a candidate of the case's family at ADVISORY (out of fold)",
    "instruments": "any signal of the case's family in the file (quick rules, Bandit, roles, taint)",
    "taint_or_rule": "a taint flow of the case's family, or a quick rule of it (families no flow can show)",
    "quick_rules_any": "any enabled quick-rule finding in the file, any family",
    "bandit_any": "any Bandit finding in the file (Python files only; none elsewhere)",
}


def _methods(
    cases: Sequence[Case],
    analysed: Mapping[str, list[Analysed]],
    flagged: Mapping[str, bool],
) -> dict[str, NDArray[np.bool_]]:
    no_flow = {f for f in families().ids if not families().operations_of(f)}

    def column(test: Callable[[Case], bool]) -> NDArray[np.bool_]:
        return np.array([test(c) for c in cases], dtype=bool)

    found = {
        "decider": column(lambda c: flagged[c.name]),
        "instruments": column(lambda c: bool(_mine(c, analysed))),
        "taint_or_rule": column(lambda c: _taint_or_rule(c, _signals(c, analysed), no_flow)),
        "quick_rules_any": column(lambda c: any(i == "qr" for i, _ in _signals(c, analysed))),
        "bandit_any": column(lambda c: any(i == "bandit" for i, _ in _signals(c, analysed))),
    }
    if not any(language_of(c.path) == "python" for c in cases):
        del found["bandit_any"]  # Bandit reads Python only: no coverage is not a score of zero
    return found


def _signals(case: Case, analysed: Mapping[str, list[Analysed]]) -> list[tuple[str, str]]:
    """The (instrument, family) of every signal in the case's file."""
    return [(s.instrument, s.family) for a in analysed.get(case.name, []) for s in a.signals]


def _taint_or_rule(case: Case, signals: Sequence[tuple[str, str]], no_flow: set[str]) -> bool:
    """A taint flow of the case's family, or a quick rule of a family no flow can show."""
    return any(
        f == case.family and (i == "taint" or (i == "qr" and case.family in no_flow)) for i, f in signals
    )


def render_benchmark(data: Mapping[str, Any]) -> str:
    """The evaluation as markdown: overall and per family, every method on the same cases, with intervals."""

    def cell(row: Mapping[str, Any], stat: str) -> str:
        v = row[stat]
        if v["value"] is None:
            return "n/a"
        return f"{v['value']:.2f} [{v['low']:.2f}, {v['high']:.2f}]"

    methods = [m for m in _DESCRIBED if m in data["overall"]]
    lines = [
        f"Cases: {data['overall']['cases']} ({data['overall']['positive']} vulnerable), {data['folds']} "
        "grouped folds "
        f"(a case is a group), {data['resamples']} case-bootstrap resamples; program "
        f"{data['program']['kind']} "
        f"({data['program']['id'][:12]}), embedding {data['program']['embedding']}.",
        "",
        "| family | cases (+/-) | method | TPR | FPR | Youden J | precision |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    rows = [("overall", data["overall"]), *data["by_family"].items()]
    for family, row in rows:
        for method in methods:
            lines.append(
                f"| {family} | {row['cases']} ({row['positive']}/{row['negative']}) | {method} | "
                f"{cell(row[method], 'tpr')} | {cell(row[method], 'fpr')} | {cell(row[method], 'j')} | "
                f"{cell(row[method], 'precision')} |"
            )
    diff = data["overall"]["j_difference"]
    lines += [
        "",
        f"J difference ({diff['of']}), overall: {diff['value']} [{diff['low']}, {diff['high']}].",
        "",
    ]
    lines += [f"- `{m}`: {text}" for m, text in _DESCRIBED.items() if m in methods]
    return "\n".join(lines) + "\n"

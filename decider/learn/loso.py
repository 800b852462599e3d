"""Leave-one-source-out: the memory-vote program at $0 on a labelled source its memory holds no case of.

For each held-out source the memory is every other shipped source's records, and the program's ADVISORY points
are fitted on that memory alone (each of its sources scored with the others, ``fit_points``), so neither the
memory nor the thresholds saw the evaluated cases: what a user whose code is unlike anything in the memory
gets. Each unit (a pair's side, a benchmark case) is scored as the decider scores it (the vote over its
nearest records, moved by the taint step's evidence: ``decider.evidence``) and flagged at ADVISORY (a live
flow always; a guarded candidate never). Its figures sit beside the instruments alone on the same units: any
quick-rule finding, Bandit alone. Intervals resample repositories (a benchmark case is its own) with their
units together.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ouroboros_gates.decider.classify import memory_vote
from ouroboros_gates.decider.evidence import Evidence
from ouroboros_gates.decider.excerpt import make_excerpt
from ouroboros_gates.decider.features import FEATURES
from ouroboros_gates.decider.learn.corpus import Labelled
from ouroboros_gates.decider.learn.metrics import average_precision
from ouroboros_gates.decider.memory import Memory
from ouroboros_gates.decider.program import CandidateView, OperatingPoint
from ouroboros_gates.decider.retrieve import Boundary, Index, Settings, Target, columns_from_specs, retrieve
from ouroboros_gates.decider.shipped import Row, example_of, opaque_group

__all__ = ["FLOOR", "RECALL", "Unit", "fit_points", "memory_of", "rows_of", "score_units", "summarise"]

FLOOR = 20
"""Positive and negative groups a family needs for its own ADVISORY point (else the pooled one)."""
RECALL = 0.90
_VIEW = CandidateView(make_excerpt("pass", 1, "python"), "", (), "")


@dataclass(frozen=True)
class Unit:
    """A labelled unit as scored: its highest candidate score and evidence, or a reach miss (no candidate)."""

    item: Labelled
    scores: tuple[tuple[float, str], ...]

    @property
    def best(self) -> tuple[float, str] | None:
        """The candidate that decides the unit: the highest score."""
        return max(self.scores) if self.scores else None


def rows_of(items: Iterable[Labelled]) -> list[Row]:
    """The memory rows of labelled units: every candidate record, its group made opaque."""
    return [_row(i, 1 if i.y else 0, x, states) for i in items for x, states in i.records]


def _row(item: Labelled, y: Literal[0, 1], x: Mapping[str, Any], states: Mapping[str, str]) -> Row:
    """One candidate record of a unit as a memory row labelled ``y``, its group made opaque."""
    return Row(
        item.source,
        opaque_group(item.source, item.group),
        item.family,
        item.language,
        y,
        item.unit,
        x,
        states,
    )


def memory_of(items: Iterable[Labelled]) -> Memory:
    """A memory of the labelled units' records (what ``ouro learn memory ship`` writes, in process)."""
    return Memory(example_of(row) for row in rows_of(items))


def _score(
    index: Index, x: Mapping[str, Any], states: Mapping[str, str], item: Labelled
) -> tuple[float, str]:
    example = example_of(_row(item, 0, x, states))
    target = Target(example.example.x, example.example.instruments, item.family, group=example.group)
    found = retrieve(index, target, Boundary("evaluation"), Settings())
    kind = str(x.get("taint.evidence") or "none")
    vote = memory_vote(found, CandidateView(_VIEW.excerpt, "", (), item.family))
    return Evidence(kind).adjust(vote.score), kind  # type: ignore[arg-type]


def score_units(items: Sequence[Labelled], memory: Memory) -> list[Unit]:
    """Every unit scored against ``memory`` (its own group never retrieved)."""
    index = Index(memory, columns_from_specs(FEATURES, profile="static", priors=False))
    return [Unit(item, tuple(_score(index, x, states, item) for x, states in item.records)) for item in items]


def _advisory(rows: Sequence[tuple[float, str, int]]) -> float:
    """The highest threshold reaching recall 0.90 over these candidates, a live flow counting as flagged and a
    guarded one as not; the lowest free score when it cannot be reached."""
    positives = [(s, kind) for s, kind, y in rows if y == 1]
    free = _free_scores(positives)
    need = math.ceil(RECALL * len(positives)) - _live(positives)
    if need <= 0:
        return 1.0
    return _free_threshold(free, need)


def _free_threshold(free: Sequence[float], need: int) -> float:
    """The free score that flags ``need`` more positives; the lowest free score when there are too few (0.5
    when there is none)."""
    if need <= len(free):
        return round(free[need - 1], 4)
    return round(free[-1], 4) if free else 0.5


def _live(positives: Sequence[tuple[float, str]]) -> int:
    """How many positives a live flow flags whatever the threshold."""
    return sum(1 for _, kind in positives if kind == "live")


def _free_scores(positives: Sequence[tuple[float, str]]) -> list[float]:
    """The scores of the positives with no taint evidence (the ones a threshold decides), highest first."""
    return sorted((s for s, kind in positives if kind == "none"), reverse=True)


def fit_points(units: Sequence[Unit]) -> dict[str, OperatingPoint]:
    """ADVISORY per family (at >= 20 positive and 20 negative groups among the pin units' candidates) and
    pooled; BLOCK is not offered (insufficient data: no evaluated precision at 0.95)."""
    rows = _pin_rows(units)
    points = {"*": _point(rows)}
    for family in sorted({r[0] for r in rows}):
        mine = _of_family(rows, family)
        if _has_floor(mine):
            points[family] = _point(mine)
    return points


_Row = tuple[str, str, float, str, int]
"""A pin unit's candidate: family, group, score, evidence kind, label."""


def _pin_rows(units: Sequence[Unit]) -> list[_Row]:
    """Every candidate of the pin units (a function alone, as a scan sees it)."""
    return [
        (u.item.family, u.item.group, s, kind, u.item.y)
        for u in units
        if u.item.unit == "pin"
        for s, kind in u.scores
    ]


def _of_family(rows: Sequence[_Row], family: str) -> list[_Row]:
    """The candidates of one family."""
    return [r for r in rows if r[0] == family]


def _point(rows: Sequence[_Row]) -> OperatingPoint:
    return OperatingPoint(advisory=_advisory([(s, k, y) for _f, _g, s, k, y in rows]))


def _has_floor(rows: Sequence[_Row]) -> bool:
    """Whether the rows come from enough positive and negative groups for a family's own point."""
    return len(_groups(rows, True)) >= FLOOR and len(_groups(rows, False)) >= FLOOR


def _groups(rows: Sequence[_Row], positive: bool) -> set[str]:
    """The groups of the positive (or the negative) rows."""
    return {g for _f, g, _s, _k, y in rows if bool(y) == positive}


def flagged(unit: Unit, points: Mapping[str, OperatingPoint]) -> bool:
    """Whether any candidate of the unit is reported: a live flow always, a guarded one never, else at the
    family's ADVISORY point."""
    point = points.get(unit.item.family) or points["*"]
    return any(kind == "live" or (kind == "none" and s >= point.advisory) for s, kind in unit.scores)


def _rates(y: NDArray[np.float64], hit: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
    """TPR, FPR, J and precision under weights ``w`` (resamples x units; one row is the point estimate)."""
    tp, fp = (w * (hit * y)).sum(-1), (w * (hit * (1 - y))).sum(-1)
    pos, neg = (w * y).sum(-1), (w * (1 - y)).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr, fpr = tp / pos, fp / neg
        return np.stack([tpr, fpr, tpr - fpr, tp / (tp + fp)], axis=-1)


def _weights(groups: Sequence[str], resamples: int, seed: int) -> NDArray[np.float64]:
    """Per resample, how many times each unit is drawn when whole groups are drawn with replacement."""
    names = sorted(set(groups))
    index = {g: i for i, g in enumerate(names)}
    member = np.array([index[g] for g in groups], dtype=np.intp)
    return _draw_counts(len(names), resamples, seed)[:, member].astype(np.float64)


def _draw_counts(n: int, resamples: int, seed: int) -> NDArray[np.int_]:
    """Per resample, how many times each of ``n`` groups is drawn (no columns when there is no group)."""
    rng = np.random.default_rng(seed)
    if not n:
        return np.zeros((resamples, 0), int)
    draws = rng.integers(0, n, size=(resamples, n))
    return np.stack([np.bincount(row, minlength=n) for row in draws])


def _interval(point: float | None, boot: Iterable[float | None]) -> dict[str, float | None]:
    values = _finite(boot)
    if point is None or not np.isfinite(point) or not values:
        return {"value": None, "low": None, "high": None}
    low, high = np.quantile(values, [0.025, 0.975])
    return {"value": round(float(point), 3), "low": round(float(low), 3), "high": round(float(high), 3)}


def _finite(boot: Iterable[float | None]) -> list[float]:
    """The resampled values that are defined and finite."""
    return [v for v in boot if v is not None and np.isfinite(v)]


_STATS = ("tpr", "fpr", "j", "precision")


def summarise(
    units: Sequence[Unit], points: Mapping[str, OperatingPoint], *, resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """A stratum's figures with intervals: the decider's PR-AUC and pairwise order, and TPR, FPR, Youden J and
    precision of the decider at ADVISORY beside the quick rules alone and Bandit alone on the same units."""
    if not units:
        return {"units": 0}
    y, s = _labels_and_scores(units)
    groups = [u.item.group for u in units]
    w = _weights(groups, resamples, seed)
    out: dict[str, Any] = {
        "units": len(units),
        "positive": int(y.sum()),
        "groups": len(set(groups)),
        "reached": _reached(units),
    }
    for name, hit in _methods(units, points).items():
        out[name] = _method_figures(y, hit, w)
    out["decider"]["pr_auc"] = _pr_auc(y, s, w[: min(resamples, 500)])
    _add_pairwise(out, units, seed)
    return out


def _reached(units: Sequence[Unit]) -> int:
    """How many units a candidate reached."""
    return sum(1 for u in units if u.scores)


def _pr_auc(
    y: NDArray[np.float64], s: NDArray[np.float64], w: NDArray[np.float64]
) -> dict[str, float | None]:
    """The decider's PR-AUC with its interval over the resample weights ``w``."""
    ap = [_weighted_ap(y, s, row) for row in w]
    return _interval(average_precision(y, s), ap)


def _add_pairwise(out: dict[str, Any], units: Sequence[Unit], seed: int) -> None:
    """Where the units hold pairs: the decider's pairwise order with its interval, and how many pairs."""
    order = _pairwise(units)
    if order is not None:
        pairs, value = order
        out["decider"]["pairwise_order"] = _pairwise_interval(pairs, value, seed)
        out["pairs"] = len(pairs)


def _method_figures(
    y: NDArray[np.float64], hit: NDArray[np.float64], w: NDArray[np.float64]
) -> dict[str, dict[str, float | None]]:
    """A method's TPR, FPR, J and precision on the units, each with its interval over the resamples ``w``."""
    point, boot = _rates(y, hit, np.ones((1, len(y))))[0], _rates(y, hit, w)
    return {stat: _interval(point[i], boot[:, i]) for i, stat in enumerate(_STATS)}


def _labels_and_scores(units: Sequence[Unit]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each unit's label, and its best candidate's score (0 for a unit no candidate reached)."""
    y = np.array([u.item.y for u in units], dtype=np.float64)
    s = np.array([u.best[0] if u.best else 0.0 for u in units], dtype=np.float64)
    return y, s


def _pairwise_interval(
    pairs: Sequence[tuple[str, float]], value: float, seed: int
) -> dict[str, float | None]:
    return _interval(value, [_pair_boot(pairs, seed + i) for i in range(200)])


def _methods(units: Sequence[Unit], points: Mapping[str, OperatingPoint]) -> dict[str, NDArray[np.float64]]:
    """Each method's flags on the units: the decider at ADVISORY, the quick rules alone, Bandit alone."""
    methods = {
        "decider": np.array([flagged(u, points) for u in units], dtype=np.float64),
        "quick_rules_any": np.array([u.item.qr_any for u in units], dtype=np.float64),
        "bandit_any": np.array([u.item.bandit_any for u in units], dtype=np.float64),
    }
    if not _any_python(units):
        del methods["bandit_any"]  # Bandit reads Python only: no coverage is not a score of zero
    return methods


def _any_python(units: Sequence[Unit]) -> bool:
    """Whether any unit is Python code."""
    return any(u.item.language == "python" for u in units)


def _weighted_ap(y: NDArray[np.float64], s: NDArray[np.float64], w: NDArray[np.float64]) -> float | None:
    keep = np.repeat(np.arange(len(y)), w.astype(np.intp))
    return average_precision(y[keep], s[keep]) if len(keep) else None


def _pairwise(units: Sequence[Unit]) -> tuple[list[tuple[str, float]], float] | None:
    """Pairs of a vulnerable and a fixed side: 1 when the vulnerable side scores higher, 0.5 on a tie."""
    sides, group = _sides(units)
    pairs = [(group[p], _order(v)) for p, v in sorted(sides.items()) if len(v) == 2]
    if not pairs:
        return None
    return pairs, float(np.mean([o for _, o in pairs]))


def _sides(units: Sequence[Unit]) -> tuple[dict[str, dict[int, float]], dict[str, str]]:
    """Each pair's vulnerable (1) and fixed (0) side scores, and each pair's group."""
    sides: dict[str, dict[int, float]] = {}
    group: dict[str, str] = {}
    for u in units:
        if u.item.direction in ("vulnerable", "fixed"):
            sides.setdefault(u.item.pair, {})[u.item.y] = u.best[0] if u.best else 0.0
            group[u.item.pair] = u.item.group
    return sides, group


def _order(side: Mapping[int, float]) -> float:
    """1 when the vulnerable side scores higher than the fixed one, 0.5 on a tie, else 0."""
    return 1.0 if side[1] > side[0] else 0.5 if side[1] == side[0] else 0.0


def _pair_boot(pairs: Sequence[tuple[str, float]], seed: int) -> float:
    """The mean pair outcome over one resample of whole groups."""
    names = sorted({g for g, _ in pairs})
    rng = np.random.default_rng(seed)
    drawn = rng.choice(len(names), size=len(names))
    by_group = _by_group(pairs)
    values = [o for i in drawn for o in by_group[names[i]]]
    return float(np.mean(values))


def _by_group(pairs: Sequence[tuple[str, float]]) -> dict[str, list[float]]:
    """The pair outcomes of each group."""
    by_group: dict[str, list[float]] = {}
    for g, o in pairs:
        by_group.setdefault(g, []).append(o)
    return by_group

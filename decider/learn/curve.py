"""Learning curves over memory size and sources (docs/decider.md, "Learning curves"), with an inverse power
law fit.

The program stays fixed; what it may retrieve varies: 0%, 25%, 50% and 100% of the memory's repository
groups (two seeded draws at 25% and 50%), and 1, 2, … all label sources. Every point is evaluated on the same
fixed, family-stratified subset of outer-fold units, the boundary applied (a unit never retrieves its own
fold). ``m(n) = a - b·n^-c`` is fitted to PR-AUC against the number of memory groups, with a repository
bootstrap interval on ``c``; projections to 1.5x and 2x the memory are reported only when it excludes 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ouroboros_gates.decider.analyse import Analysed
from ouroboros_gates.decider.learn.evaluate import Score, Scorer
from ouroboros_gates.decider.learn.folds import FoldPlan, seeded_order
from ouroboros_gates.decider.learn.labels import LabelledUnit
from ouroboros_gates.decider.learn.metrics import average_precision, balanced_brier, cluster_bootstrap
from ouroboros_gates.decider.memory import Memory

__all__ = ["fit_power_law", "learning_curve", "projection"]

_C_GRID = np.linspace(0.0, 3.0, 301)


def fit_power_law(n: Sequence[float], m: Sequence[float]) -> tuple[float, float, float] | None:
    """``(a, b, c)`` of ``m = a - b·n^-c`` by least squares (grid over c ≥ 0, a and b linear); None when
    there are fewer than three distinct sizes."""
    x, y = np.asarray(n, dtype=np.float64), np.asarray(m, dtype=np.float64)
    if len(set(x.tolist())) < 3:
        return None
    best: tuple[float, float, float, float] | None = None
    for c in _C_GRID:
        sse, a, b = _least_squares(x, y, c)
        if best is None or sse < best[0] - 1e-12:
            best = (sse, a, b, float(c))
    assert best is not None
    return best[1], best[2], best[3]


def _least_squares(x: np.ndarray, y: np.ndarray, c: float) -> tuple[float, float, float]:
    """The squared error and ``(a, b)`` of the best fit with this ``c``."""
    design = np.column_stack([np.ones_like(x), -(x**-c)])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return float(np.sum((design @ coef - y) ** 2)), float(coef[0]), float(coef[1])


def projection(
    a: float,
    b: float,
    c: float,
    low: float | None,
    high: float | None,
    top: float,
) -> dict[str, float] | str:
    """m at 1.5x and 2x the memory, only when the interval on c excludes 0 and stays inside the fit's
    bounds."""
    why = _not_projected(low, high)
    if why is not None:
        return why
    return {f"{k}x": a - b * (k * top) ** -c for k in (1.5, 2.0)}


def _not_projected(low: float | None, high: float | None) -> str | None:
    """Why the interval on c allows no projection: it does not exclude 0, or it reaches the fit's bound."""
    if low is None or high is None or low <= _C_GRID[1]:
        return "not projected: the interval on c does not exclude 0 (a flat curve)"
    if high >= _C_GRID[-1]:
        return f"not projected: the interval on c reaches the fit's bound {_C_GRID[-1]:.0f} (c unidentified)"
    return None


def _subset(
    units: Sequence[LabelledUnit],
    plan: FoldPlan,
    analysed: Mapping[str, Analysed | None],
    size: int,
    seed: int,
) -> list[LabelledUnit]:
    """Up to ``size`` analysed units of the outer folds' evaluated groups, dealt a family at a time."""
    evaluated = _fold_of(plan)
    pool = [u for u in units if u.group in evaluated and analysed.get(u.uid) is not None]
    return _deal(_seeded_by_family(pool, seed), min(size, len(pool)), size)


def _fold_of(plan: FoldPlan) -> dict[str, Any]:
    """The outer fold that evaluates each group."""
    return {g: f for f in plan.outer for g in f.eval_groups}


def _deal(ordered: dict[str, list[LabelledUnit]], total: int, size: int) -> list[LabelledUnit]:
    """Units taken a family at a time, in family order, until ``total`` are dealt (a round stops at
    ``size``)."""
    out: list[LabelledUnit] = []
    while len(out) < total:
        for family in sorted(ordered):
            if ordered[family] and len(out) < size:
                out.append(ordered[family].pop(0))
    return out


def _seeded_by_family(pool: Sequence[LabelledUnit], seed: int) -> dict[str, list[LabelledUnit]]:
    """Each family's units in a seeded order (the subset deals them a family at a time)."""
    by_family: dict[str, list[LabelledUnit]] = {}
    for u in pool:
        by_family.setdefault(u.family, []).append(u)
    return {f: _seeded(us, seed) for f, us in by_family.items()}


def _seeded(units: Sequence[LabelledUnit], seed: int) -> list[LabelledUnit]:
    """The units in the seeded order of their ids."""
    return [
        next(u for u in units if u.uid == uid) for uid in seeded_order([u.uid for u in units], seed, "curve")
    ]


class _Scored:
    """A point's units with their scores as arrays, so each bootstrap statistic reads a few of them."""

    def __init__(self, units: Sequence[LabelledUnit], scores: Sequence[Score]) -> None:
        self.groups = [u.group for u in units]
        self.y = np.array([u.y for u in units], dtype=np.float64)
        self.s = np.array([sc.s for sc in scores], dtype=np.float64)
        self.fam = [u.family for u in units]

    def pr(self, idx: np.ndarray) -> float | None:
        return average_precision(self.y[idx], self.s[idx])

    def brier(self, idx: np.ndarray) -> float | None:
        return balanced_brier([(self.fam[i], self.groups[i], int(self.y[i]), float(self.s[i])) for i in idx])

    def interval(self, stat: Callable[[np.ndarray], float | None]) -> dict[str, Any]:
        """The statistic on every unit, with its repository-bootstrap interval."""
        value = stat(np.arange(len(self.groups)))
        low, high = cluster_bootstrap(self.groups, stat, resamples=500, seed=0)
        return {"value": value, "low": low, "high": high}


def _point(units: Sequence[LabelledUnit], scores: Sequence[Score]) -> dict[str, Any]:
    """PR-AUC and balanced Brier of a point with intervals, and its share of unsure answers."""
    scored = _Scored(units, scores)
    return {
        "pr_auc": scored.interval(scored.pr),
        "balanced_brier": scored.interval(scored.brier),
        "share_unsure": float(np.mean([sc.unsure for sc in scores])) if scores else None,
    }


def learning_curve(
    units: Sequence[LabelledUnit],
    plan: FoldPlan,
    analysed: Mapping[str, Analysed | None],
    memory: Memory,
    make_scorer: Callable[[Memory], Scorer],
    *,
    size: int = 200,
    seed: int = 0,
    resamples: int = 200,
) -> dict[str, Any]:
    """The curve's points, the power-law fit with its interval on c, and projections where they are
    allowed."""
    subset = _subset(units, plan, analysed, size, seed)
    fold_of = _fold_of(plan)
    sources = sorted({e.source for e in memory.examples})
    points, per_unit = [], []
    for config in _configs(sources):
        restricted = _restricted(memory, config, seed)
        scorer = make_scorer(restricted)
        scores = [scorer(u, fold_of[u.group]) for u in subset]
        per_unit.append(scores)
        points.append({**_described(config, sources, restricted), **_point(subset, scores)})
    return {
        "subset_units": len(subset),
        "subset_groups": len({u.group for u in subset}),
        "points": points,
        "fit": _fit(subset, points, per_unit, resamples, seed),
    }


_Config = tuple[str, float, int, frozenset[str] | None]
"""A point of the curve: ``size`` (a share of the memory's groups, drawn ``draw``) or ``sources`` (the first
few sources)."""


def _described(config: _Config, sources: Sequence[str], restricted: Memory) -> dict[str, Any]:
    """What a point of the curve kept: its kind, share and draw, the sources, and the memory groups."""
    kind, share, draw, keep_sources = config
    return {
        "kind": kind,
        "share": share,
        "draw": draw,
        "sources": sorted(keep_sources or sources),
        "memory_groups": len({e.group for e in restricted.examples}),
    }


def _configs(sources: Sequence[str]) -> list[_Config]:
    configs: list[_Config] = [("size", 0.0, 0, None)]
    configs += [("size", share, draw, None) for share in (0.25, 0.5) for draw in (0, 1)]
    configs += [("size", 1.0, 0, None)]
    configs += [("sources", float(n), 0, frozenset(sources[:n])) for n in range(1, len(sources))]
    return configs


def _restricted(memory: Memory, config: _Config, seed: int) -> Memory:
    """The memory a point of the curve scores with."""
    kind, share, draw, keep_sources = config
    if kind == "size":
        return _share_of_groups(memory, share, seed + draw)
    return Memory(e for e in memory.examples if keep_sources and e.source in keep_sources)


def _share_of_groups(memory: Memory, share: float, seed: int) -> Memory:
    """The memory's examples of a seeded ``share`` of its repository groups."""
    groups = sorted({e.group for e in memory.examples})
    kept = set(seeded_order(groups, seed, "share")[: round(share * len(groups))])
    return Memory(e for e in memory.examples if e.group in kept)


def _c_of(
    idx: np.ndarray, y: np.ndarray, n: Sequence[int], per_size: Sequence[Sequence[Score]]
) -> float | None:
    """The power law's c refitted on one resample of the units (None: a size without a PR-AUC)."""
    got = _fit_sizes(n, [_resampled_pr_auc(idx, y, s) for s in per_size])
    return None if got is None else got[2]


def _resampled_pr_auc(idx: np.ndarray, y: np.ndarray, scores: Sequence[Score]) -> float | None:
    """The PR-AUC of one memory size's scores on a resample of the units."""
    return average_precision(y[idx], np.array([scores[i].s for i in idx]))


def _sized(
    points: Sequence[dict[str, Any]], per_unit: Sequence[Sequence[Score]]
) -> list[tuple[dict[str, Any], Sequence[Score]]]:
    """The memory-size points with any memory, each with its units' scores."""
    return [
        (p, s)
        for p, s in zip(points, per_unit, strict=True)
        if p["kind"] == "size" and p["memory_groups"] > 0
    ]


def _fit(
    subset: Sequence[LabelledUnit],
    points: Sequence[dict[str, Any]],
    per_unit: Sequence[Sequence[Score]],
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    """The power law fitted to PR-AUC against memory groups, its interval on c and the projections (or why
    there is no fit)."""
    sized = _sized(points, per_unit)
    n = [p["memory_groups"] for p, _ in sized]
    fit = _fit_sizes(n, [p["pr_auc"]["value"] for p, _ in sized])
    if fit is None:
        return {"fitted": False, "reason": "insufficient data (fewer than three memory sizes with a PR-AUC)"}
    a, b, c = fit
    low, high = _c_interval(subset, n, [s for _, s in sized], resamples, seed)
    out: dict[str, Any] = {"fitted": True, "a": a, "b": b, "c": c, "c_low": low, "c_high": high}
    out["projection"] = projection(a, b, c, low, high, max(n))
    return out


def _fit_sizes(n: Sequence[int], m: Sequence[float | None]) -> tuple[float, float, float] | None:
    """The power law over the memory sizes; None when a size has no PR-AUC or there are fewer than three."""
    if any(v is None for v in m):
        return None
    return fit_power_law(n, [float(v) for v in m if v is not None])


def _c_interval(
    subset: Sequence[LabelledUnit],
    n: Sequence[int],
    scores: Sequence[Sequence[Score]],
    resamples: int,
    seed: int,
) -> tuple[float | None, float | None]:
    """The repository-bootstrap interval on the power law's c."""
    y = np.array([u.y for u in subset], dtype=np.float64)
    return cluster_bootstrap(
        [u.group for u in subset], lambda idx: _c_of(idx, y, n, scores), resamples=resamples, seed=seed
    )

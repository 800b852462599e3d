"""Evaluation metrics with repository-cluster bootstrap intervals.

Units inside one repository are correlated, so every interval resamples repositories (groups) with
replacement, keeping each one's units together: 2,000 resamples, 2.5% and 97.5% quantiles. A stratum
with fewer than 10 positive or 10 negative repositories, or whose recall interval is wider than 0.5,
is "insufficient data (n repositories)" and gets no number.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "FLOOR",
    "Interval",
    "Prediction",
    "average_precision",
    "balanced_brier",
    "cluster_bootstrap",
    "insufficient",
    "summarise",
]

FLOOR = 10
Float = NDArray[np.float64]


@dataclass(frozen=True)
class Prediction:
    """One evaluated unit: raw score, calibrated p (None below the floors), action and label."""

    uid: str
    group: str
    family: str
    language: str
    source: str
    direction: str
    delta: bool
    y: int
    s: float
    p: float | None
    unsure: bool
    action: str
    fold: str
    reach_miss: bool = False


@dataclass(frozen=True)
class Interval:
    """A point estimate with its repository-cluster bootstrap 95% interval (None when undefined)."""

    value: float | None
    low: float | None
    high: float | None

    def as_dict(self) -> dict[str, float | None]:
        """``{"value", "low", "high"}`` rounded to 4 places."""
        return {"value": _round4(self.value), "low": _round4(self.low), "high": _round4(self.high)}

    def text(self, percent: bool = False) -> str:
        """``0.81 [0.70, 0.90]`` or ``n/a``."""
        if self.value is None:
            return "n/a"
        spec = ".1f" if percent else ".2f"
        if self.low is None or self.high is None:
            return format(self.value, spec)
        return f"{self.value:{spec}} [{self.low:{spec}}, {self.high:{spec}}]"


def _round4(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def average_precision(y: Sequence[int] | NDArray[Any], p: Sequence[float] | NDArray[Any]) -> float | None:
    """Area under the precision-recall curve as average precision (ties share one step)."""
    ya, pa = np.asarray(y, dtype=np.float64), np.asarray(p, dtype=np.float64)
    positives = ya.sum()
    if positives == 0:
        return None
    order = np.argsort(-pa, kind="mergesort")
    ys, ps = ya[order], pa[order]
    tp, seen = np.cumsum(ys), np.arange(1, len(ys) + 1)
    last = np.r_[ps[1:] != ps[:-1], True]  # the last index of each tied block
    tp_b, seen_b = tp[last], seen[last]
    gained = np.diff(np.r_[0.0, tp_b])
    return float(np.sum(gained * (tp_b / seen_b)) / positives)


def balanced_brier(rows: Sequence[tuple[str, str, int, float]], cap: float = 5.0) -> float | None:
    """Brier score with each (family, label) cell weighted equally and each repository capped at ``cap``
    effective rows per cell. ``rows`` are ``(family, group, y, score)``."""
    sums = _weighted_cells(rows, cap)
    if not sums:
        return None
    return float(np.mean([s / w for s, w in sums.values()]))


def _weighted_cells(
    rows: Sequence[tuple[str, str, int, float]], cap: float
) -> dict[tuple[str, int], list[float]]:
    """Each (family, label) cell's weighted squared error and total weight, a repository's rows weighing at
    most ``cap`` in a cell."""
    per_cell_group: Counter[tuple[str, int, str]] = Counter((f, y, g) for f, g, y, _ in rows)
    sums: dict[tuple[str, int], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for family, group, y, score in rows:
        w = min(1.0, cap / per_cell_group[(family, y, group)])
        cell = sums[(family, y)]
        cell[0] += w * (score - y) ** 2
        cell[1] += w
    return sums


def cluster_bootstrap(
    groups: Sequence[str],
    statistic: Callable[[NDArray[np.int64]], float | None],
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """95% interval of ``statistic(unit indices)`` over resamples of whole groups."""
    names = sorted(set(groups))
    if not names:
        return None, None
    values = _resampled(_blocks(groups, names), statistic, resamples, seed)
    if not values:
        return None, None
    low, high = np.quantile(values, [0.025, 0.975])
    return float(low), float(high)


def _blocks(groups: Sequence[str], names: Sequence[str]) -> list[NDArray[np.int64]]:
    """The unit indexes of each named group, in the order of ``names``."""
    members: dict[str, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        members[g].append(i)
    return [np.asarray(members[g], dtype=np.int64) for g in names]


def _resampled(
    blocks: Sequence[NDArray[np.int64]],
    statistic: Callable[[NDArray[np.int64]], float | None],
    resamples: int,
    seed: int,
) -> list[float]:
    """The statistic on each resample of whole groups (drawn with replacement), where it is defined and
    finite."""
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        pick = rng.integers(0, len(blocks), len(blocks))
        value = statistic(np.concatenate([blocks[j] for j in pick]))
        if value is not None and np.isfinite(value):
            values.append(value)
    return values


def insufficient(
    preds: Sequence[Prediction], recall: Interval | None = None, n: int | None = None
) -> str | None:
    """ "insufficient data (n repositories)" below the floors or with a recall interval wider than 0.5."""
    pos, neg = _groups_with(preds, 1), _groups_with(preds, 0)
    n = len(pos | neg) if n is None else n
    if _below_floor(pos, neg):
        return f"insufficient data ({n} repositories)"
    if recall is not None and _too_wide(recall):
        return f"insufficient data ({n} repositories)"
    return None


def _below_floor(pos: set[str], neg: set[str]) -> bool:
    """Fewer than ``FLOOR`` positive or negative repositories."""
    return len(pos) < FLOOR or len(neg) < FLOOR


def _groups_with(preds: Sequence[Prediction], y: int) -> set[str]:
    """The repositories with a unit of this label."""
    return {p.group for p in preds if p.y == y}


def _too_wide(interval: Interval) -> bool:
    """An interval wider than 0.5 (an interval with an open end is not)."""
    return interval.low is not None and interval.high is not None and interval.high - interval.low > 0.5


def _negatives(preds: Sequence[Prediction], direction: str) -> NDArray[np.bool_]:
    """Which units are negatives of one direction (``benign``, ``repair``)."""
    return np.array([p.direction == direction and p.y == 0 for p in preds], dtype=bool)


def _cells(preds: Sequence[Prediction]) -> tuple[NDArray[np.int64], int]:
    """Each unit's (family, label) cell as an index, and how many cells there are."""
    cells = [(p.family, p.y) for p in preds]
    names = sorted(set(cells))
    return np.array([names.index(c) for c in cells], dtype=np.int64), len(names)


def _cell_weights(preds: Sequence[Prediction]) -> NDArray[np.float64]:
    """A unit's weight in its cell: a repository counts at most five units of a cell."""
    counts = Counter((p.family, p.y, p.group) for p in preds)
    return np.array([min(1.0, 5.0 / counts[(p.family, p.y, p.group)]) for p in preds])


def _probabilities(preds: Sequence[Prediction]) -> NDArray[np.float64]:
    """Each unit's calibrated probability (0.0 where it has none)."""
    return np.array([p.p if p.p is not None else 0.0 for p in preds], dtype=np.float64)


def _with_action(preds: Sequence[Prediction], action: str) -> NDArray[np.bool_]:
    """Which units got this action."""
    return np.array([p.action == action for p in preds], dtype=bool)


class _Arrays:
    """A stratum's units as arrays, so each bootstrap statistic is a few vector operations."""

    def __init__(self, preds: Sequence[Prediction]) -> None:
        self.groups = [p.group for p in preds]
        self.y = np.array([p.y for p in preds], dtype=np.float64)
        self.p = _probabilities(preds)
        self.block = _with_action(preds, "BLOCK")
        self.advisory = self.block | _with_action(preds, "ADVISORY")
        self.unsure = np.array([p.unsure for p in preds], dtype=np.float64)
        self.benign = _negatives(preds, "benign")
        self.repair = _negatives(preds, "repair")
        self.cell, self.n_cells = _cells(preds)
        self.w = _cell_weights(preds)

    @staticmethod
    def _share(hit: NDArray[Any], among: NDArray[Any]) -> float | None:
        n = among.sum()
        return float((hit & among).sum() / n) if n else None

    def recall(self, idx: NDArray[np.int64], advisory: bool) -> float | None:
        at = (self.advisory if advisory else self.block)[idx]
        return self._share(at, self.y[idx] == 1)

    def precision(self, idx: NDArray[np.int64], advisory: bool) -> float | None:
        at = (self.advisory if advisory else self.block)[idx]
        return self._share(self.y[idx] == 1, at)

    def false_blocks(self, idx: NDArray[np.int64], benign: bool) -> float | None:
        share = self._share(self.block[idx], (self.benign if benign else self.repair)[idx])
        return None if share is None else 100.0 * share

    def pr_auc(self, idx: NDArray[np.int64]) -> float | None:
        return average_precision(self.y[idx], self.p[idx])

    def brier(self, idx: NDArray[np.int64]) -> float | None:
        err = self.w[idx] * (self.p[idx] - self.y[idx]) ** 2
        num = np.bincount(self.cell[idx], err, self.n_cells)
        den = np.bincount(self.cell[idx], self.w[idx], self.n_cells)
        present = den > 0
        return float(np.mean(num[present] / den[present])) if present.any() else None

    def share_unsure(self, idx: NDArray[np.int64]) -> float | None:
        return float(self.unsure[idx].mean()) if len(idx) else None

    def interval(
        self, stat: Callable[[NDArray[np.int64]], float | None], resamples: int, seed: int
    ) -> Interval:
        value = stat(np.arange(len(self.groups), dtype=np.int64))
        if value is None:
            return Interval(None, None, None)
        low, high = cluster_bootstrap(self.groups, stat, resamples=resamples, seed=seed)
        return Interval(value, low, high)


def summarise(preds: Sequence[Prediction], *, resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Every metric of one stratum with its interval; delta units for BLOCK/ADVISORY and ``pr_auc``, pin units
    (a function alone, as a scan sees it) for ``pr_auc_pin``, all units for Brier."""
    scored, deltas, pins = _bases(preds)
    d = _Arrays(deltas)
    recall_block = d.interval(lambda i: d.recall(i, False), resamples, seed)
    recall_advisory = d.interval(lambda i: d.recall(i, True), resamples, seed)
    n = len({p.group for p in preds})
    reason = insufficient(deltas, recall_block, n=n) or insufficient(deltas, recall_advisory, n=n)
    out: dict[str, Any] = {
        "units": len(preds),
        "scored": len(scored),
        "repositories": n,
        "positive_repositories": len(_groups_with(deltas, 1)),
        "negative_repositories": len(_groups_with(deltas, 0)),
        "insufficient": reason,
    }
    if reason is not None:
        return out
    a = _Arrays(scored)
    everything = _Arrays(preds)
    pin = _Arrays(pins)
    metrics = {
        "recall_block": recall_block,
        "precision_block": d.interval(lambda i: d.precision(i, False), resamples, seed),
        "recall_advisory": recall_advisory,
        "precision_advisory": d.interval(lambda i: d.precision(i, True), resamples, seed),
        "false_blocks_per_100_benign": d.interval(lambda i: d.false_blocks(i, True), resamples, seed),
        "false_blocks_per_100_repairs": d.interval(lambda i: d.false_blocks(i, False), resamples, seed),
        "pr_auc": d.interval(d.pr_auc, resamples, seed),
        "pr_auc_pin": pin.interval(pin.pr_auc, resamples, seed),
        "balanced_brier": a.interval(a.brier, resamples, seed),
        "share_unsure": everything.interval(everything.share_unsure, resamples, seed),
    }
    out.update({name: m.as_dict() for name, m in metrics.items()})
    return out


def _bases(
    preds: Sequence[Prediction],
) -> tuple[list[Prediction], list[Prediction], list[Prediction]]:
    """The scored units; the delta units among them (all scored when there are none); the pin units."""
    scored = [p for p in preds if p.p is not None]
    return scored, _delta_units(scored), [p for p in scored if not p.delta]


def _delta_units(scored: list[Prediction]) -> list[Prediction]:
    """The delta units (a change, as a push is decided), or every scored unit when there are none."""
    return [p for p in scored if p.delta] or scored

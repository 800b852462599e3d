"""Platt scaling of the raw score, cross-fitted over the outer folds, and its check.

The map is ``p = sigmoid(a · logit(clip(s, 0.01, 0.99)) + b)``. Per family when the family has ≥ 20
positive and ≥ 20 negative repositories; pooled with a per-family intercept between 10 and 20; otherwise
"insufficient data" and no probability. Cross-fitting: fold j's map is fitted on the other folds'
predictions only. The check: 5 quantile bins, the calibration slope and intercept with repository
bootstrap intervals, and the expected calibration error; it holds when the slope interval contains 1, the
intercept interval contains 0 and ECE ≤ 0.05, otherwise BLOCK is withheld with ``reason = "calibration"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ouroboros_gates.decider.learn.metrics import cluster_bootstrap

__all__ = [
    "PER_FAMILY_FLOOR",
    "POOLED_FLOOR",
    "CalibrationCheck",
    "CalibrationMap",
    "calibration_check",
    "fit_map",
    "fit_platt",
    "logit",
]

PER_FAMILY_FLOOR = 20
POOLED_FLOOR = 10


def logit(s: NDArray[np.float64] | Sequence[float]) -> NDArray[np.float64]:
    """``logit(clip(s, 0.01, 0.99))``."""
    c = np.clip(np.asarray(s, dtype=np.float64), 0.01, 0.99)
    return np.asarray(np.log(c / (1 - c)), dtype=np.float64)


def _newton(x: NDArray[np.float64], y: NDArray[np.float64], ridge: float = 1e-6) -> NDArray[np.float64]:
    """Logistic regression by Newton's method (design ``x`` includes the intercept columns)."""
    beta = np.zeros(x.shape[1])
    for _ in range(50):
        eta = np.clip(x @ beta, -30, 30)
        mu = 1 / (1 + np.exp(-eta))
        grad = x.T @ (y - mu) - ridge * beta
        hess = (x * (mu * (1 - mu))[:, None]).T @ x + ridge * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        beta += step
        if np.max(np.abs(step)) < 1e-9:
            break
    return beta


def fit_platt(s: Sequence[float], y: Sequence[int]) -> tuple[float, float]:
    """``(a, b)`` of one Platt map."""
    z = logit(s)
    beta = _newton(np.column_stack([z, np.ones_like(z)]), np.asarray(y, dtype=np.float64))
    return float(beta[0]), float(beta[1])


@dataclass(frozen=True)
class CalibrationMap:
    """Per-family ``(a, b)``; families under the pooled floor are listed as insufficient."""

    params: Mapping[str, tuple[float, float]]
    mode: Mapping[str, str]
    insufficient: Mapping[str, str] = field(default_factory=dict)

    def apply(self, family: str, s: float) -> float | None:
        """The calibrated probability, or None for a family without a map."""
        if family not in self.params:
            return None
        a, b = self.params[family]
        return float(1 / (1 + np.exp(-(a * logit([s])[0] + b))))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "method": "platt-crossfit",
            "per_family": {
                f: {"a": round(a, 6), "b": round(b, 6), "mode": self.mode[f]}
                for f, (a, b) in sorted(self.params.items())
            },
            "insufficient": dict(sorted(self.insufficient.items())),
        }


def fit_map(rows: Sequence[tuple[str, str, int, float]]) -> CalibrationMap:
    """Fit from ``(family, group, y, s)`` rows: per family at 20/20 groups, pooled at 10/10, else none."""
    pos, neg = _groups_by_label(rows)
    params: dict[str, tuple[float, float]] = {}
    mode: dict[str, str] = {}
    pooled: list[str] = []
    short: dict[str, str] = {}
    for family in sorted({r[0] for r in rows}):
        groups = (pos.get(family, set()), neg.get(family, set()))
        if min(map(len, groups)) >= PER_FAMILY_FLOOR:
            params[family] = _fit_family(_rows_of(rows, [family]))
            mode[family] = "per_family"
        elif min(map(len, groups)) >= POOLED_FLOOR:
            pooled.append(family)
        else:
            short[family] = f"insufficient data ({len(groups[0] | groups[1])} repositories)"
    for family, ab in _fit_pooled(rows, pooled).items():
        params[family], mode[family] = ab, "pooled"
    return CalibrationMap(params=params, mode=mode, insufficient=short)


def _rows_of(
    rows: Sequence[tuple[str, str, int, float]], families: Sequence[str]
) -> list[tuple[str, str, int, float]]:
    """The rows of these families, in order."""
    return [r for r in rows if r[0] in families]


def _fit_family(fam: Sequence[tuple[str, str, int, float]]) -> tuple[float, float]:
    """The Platt map of one family's rows."""
    return fit_platt([r[3] for r in fam], [r[2] for r in fam])


def _groups_by_label(
    rows: Sequence[tuple[str, str, int, float]],
) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The repository groups with a positive, and with a negative, unit of each family."""
    pos: dict[str, set[str]] = {}
    neg: dict[str, set[str]] = {}
    for family, group, y, _ in rows:
        (pos if y else neg).setdefault(family, set()).add(group)
    return pos, neg


def _fit_pooled(
    rows: Sequence[tuple[str, str, int, float]], pooled: Sequence[str]
) -> dict[str, tuple[float, float]]:
    """One shared slope with an intercept per family, fitted on the families below the per-family floor."""
    if not pooled:
        return {}
    fam_rows = _rows_of(rows, pooled)
    z = logit([r[3] for r in fam_rows])
    design = np.column_stack([z, _family_indicators(fam_rows, pooled)])
    beta = _newton(design, np.array([r[2] for r in fam_rows], dtype=np.float64))
    return {family: (float(beta[0]), float(beta[1 + i])) for i, family in enumerate(pooled)}


def _family_indicators(
    rows: Sequence[tuple[str, str, int, float]], families: Sequence[str]
) -> NDArray[np.float64]:
    """A column per family, 1.0 on that family's rows: the per-family intercepts of the pooled fit."""
    return np.array([[1.0 if r[0] == f else 0.0 for f in families] for r in rows])


@dataclass(frozen=True)
class CalibrationCheck:
    """The reliability table, slope and intercept with intervals, ECE, and whether it holds."""

    bins: list[dict[str, float]]
    slope: tuple[float, float | None, float | None]
    intercept: tuple[float, float | None, float | None]
    ece: float
    holds: bool

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "bins": self.bins,
            "slope": _rounded(self.slope),
            "intercept": _rounded(self.intercept),
            "ece": round(self.ece, 4),
            "holds": self.holds,
        }


def _rounded(t: tuple[float, float | None, float | None]) -> list[float | None]:
    """A value and its bounds to four places."""
    return [None if v is None else round(v, 4) for v in t]


def _slope_intercept(p: NDArray[np.float64], y: NDArray[np.float64]) -> tuple[float, float] | None:
    if y.min() == y.max():
        return None
    z = logit(p)
    beta = _newton(np.column_stack([z, np.ones_like(z)]), y, ridge=1e-4)
    return float(beta[0]), float(beta[1])


def calibration_check(
    p: Sequence[float], y: Sequence[int], groups: Sequence[str], *, resamples: int = 1000, seed: int = 0
) -> CalibrationCheck:
    """Check calibrated probabilities against labels (5 quantile bins, slope, intercept, ECE ≤ 0.05)."""
    pa, ya = np.asarray(p, dtype=np.float64), np.asarray(y, dtype=np.float64)
    bins, ece = _reliability(pa, ya)
    point = _slope_intercept(pa, ya) or (float("nan"), float("nan"))
    s_low, s_high = cluster_bootstrap(groups, _resampled(pa, ya, 0), resamples=resamples, seed=seed)
    i_low, i_high = cluster_bootstrap(groups, _resampled(pa, ya, 1), resamples=resamples, seed=seed)
    holds = _covers(s_low, s_high, 1) and _covers(i_low, i_high, 0) and ece <= 0.05
    return CalibrationCheck(
        bins, (point[0], s_low, s_high), (point[1], i_low, i_high), float(ece), bool(holds)
    )


def _reliability(pa: NDArray[np.float64], ya: NDArray[np.float64]) -> tuple[list[dict[str, float]], float]:
    """The reliability table over 5 quantile bins (empty bins left out) and the expected calibration error."""
    edges = np.quantile(pa, np.linspace(0, 1, 6))
    which = np.clip(np.searchsorted(edges[1:-1], pa, side="right"), 0, 4)
    bins, ece = [], 0.0
    for b in range(5):
        m = which == b
        if m.any():
            bins.append(
                {
                    "n": int(m.sum()),
                    "mean_p": round(float(pa[m].mean()), 4),
                    "observed": round(float(ya[m].mean()), 4),
                }
            )
            ece += m.sum() / len(pa) * abs(pa[m].mean() - ya[m].mean())
    return bins, ece


def _resampled(pa: NDArray[np.float64], ya: NDArray[np.float64], k: int) -> Any:
    """The slope (``k`` 0) or intercept (1) of a resample's indexes; None where it has one label only."""

    def f(idx: NDArray[np.int64]) -> float | None:
        got = _slope_intercept(pa[idx], ya[idx])
        return None if got is None else got[k]

    return f


def _covers(low: float | None, high: float | None, value: float) -> bool:
    """Whether an interval with both bounds contains the value."""
    return low is not None and high is not None and low <= value <= high

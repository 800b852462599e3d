"""A benchmark's rates with case-bootstrap intervals: TPR, FPR, Youden's J and precision of every method on
the same resampled cases, and the J difference between two methods on the same resamples."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ouroboros_gates.decider.learn.benchmark_cases import Case

__all__ = ["by_family", "summary"]

_STATS = ("tpr", "fpr", "j", "precision")


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


def summary(
    y: NDArray[np.int8],
    methods: Mapping[str, NDArray[np.bool_]],
    resamples: int,
    seed: int,
    reference: str,
    peer: str,
) -> dict[str, Any]:
    """The cases counted, each method's rates with intervals, and the J difference ``reference - peer``."""
    n = len(y)
    idx = _resample_indexes(n, resamples, seed)
    out: dict[str, Any] = {"cases": n, "positive": int(y.sum()), "negative": int(n - y.sum())}
    boot: dict[str, NDArray[np.float64]] = {}
    for name, hit in methods.items():
        out[name], boot[name] = _method_rates(y, hit, idx)
    out["j_difference"] = _j_difference(out, boot, reference, peer)
    return out


def _resample_indexes(n: int, resamples: int, seed: int) -> NDArray[np.intp]:
    """The seeded case-bootstrap indexes, one row per resample (no columns when there is no case)."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(resamples, n)) if n else np.zeros((resamples, 0), dtype=np.intp)


def _method_rates(
    y: NDArray[np.int8], hit: NDArray[np.bool_], idx: NDArray[np.intp]
) -> tuple[dict[str, dict[str, float | None]], NDArray[np.float64]]:
    """A method's rates on all the cases with their 95% intervals, and its rates in every resample."""
    point = _rates(y, hit, np.arange(len(y))[None, :])[0]
    boot = _rates(y, hit, idx)
    with warnings.catch_warnings():  # precision is undefined in a resample that flags nothing
        warnings.simplefilter("ignore", RuntimeWarning)
        low = np.nanpercentile(boot, 2.5, axis=0)
        high = np.nanpercentile(boot, 97.5, axis=0)
    return {stat: _interval(point[i], low[i], high[i]) for i, stat in enumerate(_STATS)}, boot


def _j_difference(
    out: Mapping[str, Any], boot: Mapping[str, NDArray[np.float64]], reference: str, peer: str
) -> dict[str, Any]:
    """Youden's J of ``reference`` minus that of ``peer``, with its interval over the same resamples."""
    diff = boot[reference][:, 2] - boot[peer][:, 2]
    point = out[reference]["j"]["value"], out[peer]["j"]["value"]
    return {
        "of": f"{reference} - {peer}",
        **_interval(None if None in point else point[0] - point[1], *np.nanpercentile(diff, [2.5, 97.5])),
    }


def _interval(value: float | None, low: float, high: float) -> dict[str, float | None]:
    """A value and its bounds, each rounded to three places (None where undefined)."""
    return {"value": _rounded(value), "low": _rounded(low), "high": _rounded(high)}


def _rounded(x: float | None) -> float | None:
    return None if x is None or not np.isfinite(x) else round(float(x), 3)


def by_family(
    cases: Sequence[Case],
    y: NDArray[np.int8],
    methods: Mapping[str, NDArray[np.bool_]],
    resamples: int,
    seed: int,
) -> dict[str, dict[str, Any]]:
    """The summary of each family's cases, with the benchmark categories they come from."""
    return {
        family: _family_summary(cases, family, y, methods, resamples, seed)
        for family in sorted({c.family for c in cases})
    }


def _family_summary(
    cases: Sequence[Case],
    family: str,
    y: NDArray[np.int8],
    methods: Mapping[str, NDArray[np.bool_]],
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    """The summary of one family's cases, with their categories."""
    pick = np.array([c.family == family for c in cases])
    out = summary(
        y[pick], {m: v[pick] for m, v in methods.items()}, resamples, seed, "decider", "instruments"
    )
    out["categories"] = sorted({c.category for c in cases if c.family == family})
    return out

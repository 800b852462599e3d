"""Least squares with a t interval, in pure Python (``math`` only; no numpy or scipy).

The slope of ``y = a + b x`` is fitted by ordinary least squares; its standard error is
``sqrt(SSR / (n - 2) / Sxx)`` and its 95% interval is ``b ± t(0.975; n - 2) · SE(b)``.

The t quantile ``t(0.975; df)`` comes from a table for df = 1 to 30 (the standard values to nine decimals)
and, above 30, from the Cornish-Fisher expansion of Student's t about the normal quantile
(Abramowitz & Stegun 26.7.5, four terms), whose error there is below 1e-6.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

__all__ = ["MIN_POINTS", "Fit", "ols", "t_975"]

MIN_POINTS = 3
"""A slope with an interval needs df = n - 2 >= 1."""

_T_975 = (
    12.706204736,
    4.302652730,
    3.182446305,
    2.776445105,
    2.570581836,
    2.446911851,
    2.364624252,
    2.306004135,
    2.262157163,
    2.228138852,
    2.200985160,
    2.178812830,
    2.160368656,
    2.144786688,
    2.131449546,
    2.119905299,
    2.109815578,
    2.100922040,
    2.093024054,
    2.085963447,
    2.079613845,
    2.073873068,
    2.068657610,
    2.063898562,
    2.059538553,
    2.055529439,
    2.051830516,
    2.048407142,
    2.045229642,
    2.042272456,
)
_Z_975 = NormalDist().inv_cdf(0.975)


def t_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (table to 30, then A&S 26.7.5)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, not {df}")
    if df <= len(_T_975):
        return _T_975[df - 1]
    z, v = _Z_975, float(df)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / v + g2 / v**2 + g3 / v**3 + g4 / v**4


@dataclass(frozen=True)
class Fit:
    """An OLS line ``y = intercept + slope x`` with the slope's standard error."""

    slope: float
    intercept: float
    se: float
    n: int

    @property
    def df(self) -> int:
        """Degrees of freedom of the residuals, n - 2."""
        return self.n - 2

    def interval(self) -> tuple[float, float]:
        """The slope's 95% interval, ``slope ± t(0.975; n - 2) · se``."""
        half = t_975(self.df) * self.se
        return self.slope - half, self.slope + half


def ols(xs: Sequence[float], ys: Sequence[float]) -> Fit | str:
    """The least-squares fit of ``ys`` on ``xs``, or the reason there is none."""
    n = len(xs)
    if n != len(ys):
        raise ValueError(f"{n} x values but {len(ys)} y values")
    if n < MIN_POINTS:
        return f"{n} point(s); a slope with an interval needs {MIN_POINTS}"
    mean_x, mean_y = math.fsum(xs) / n, math.fsum(ys) / n
    sxx = math.fsum((x - mean_x) ** 2 for x in xs)
    if sxx == 0.0:
        return f"all {n} points share one x value; no slope"
    slope = math.fsum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sxx
    intercept = mean_y - slope * mean_x
    ssr = math.fsum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    return Fit(slope=slope, intercept=intercept, se=math.sqrt(ssr / (n - 2) / sxx), n=n)

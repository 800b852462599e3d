"""Paired experiments: the statistics and the decision (docs/decider.md, "Experiments").

- Primary: the paired difference B - A of the per-unit outcome, with a 95% interval from a
  repository-cluster bootstrap (10,000 resamples of repositories, their units kept together).
- Secondary: the exact McNemar test on discordant units (a binomial test with p = 0.5).
- Sequential: two looks, at half and all of the repositories (pre-shuffled, seeded), with
  O'Brien-Fleming boundaries |z| ≥ 2.797 at the first look and 1.977 at the final one.
- Decision: adopt B when the final interval excludes 0 in B's favour, reject when it excludes 0 against it;
  for a cost-only change, equivalent when the TOST 90% interval lies within ±margin and the cost interval
  shows a saving; otherwise inconclusive (the incumbent stays).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ouroboros_gates.decider.learn.folds import seeded_order
from ouroboros_gates.decider.learn.metrics import cluster_bootstrap

__all__ = [
    "Decision",
    "Look",
    "Outcome",
    "analyse",
    "arm_order",
    "binomial_cdf",
    "mcnemar_exact",
    "obrien_fleming",
    "paired_bootstrap",
]

Decision = Literal["adopt", "reject", "inconclusive", "equivalent"]


@dataclass(frozen=True)
class Outcome:
    """One unit's outcome in both arms (1 success, 0 not) and each arm's spend on it."""

    unit: str
    group: str
    a: int
    b: int
    usd_a: float = 0.0
    usd_b: float = 0.0

    @property
    def b_only(self) -> bool:
        """A discordant unit where only arm B succeeded."""
        return bool(self.b and not self.a)

    @property
    def a_only(self) -> bool:
        """A discordant unit where only arm A succeeded."""
        return bool(self.a and not self.b)


def arm_order(unit: str, seed: int) -> tuple[str, str]:
    """Which arm runs first for a unit: a seeded coin per unit, so provider drift does not align with arms."""
    coin = hashlib.sha256(f"{seed}\0{unit}".encode()).digest()[0] & 1
    return ("A", "B") if coin == 0 else ("B", "A")


def binomial_cdf(k: int, n: int, p: float = 0.5) -> float:
    """P(X ≤ k) for X ~ Binomial(n, p), exactly (summed with integers where p = 0.5)."""
    if k < 0:
        return 0.0
    if p == 0.5:
        total: int = sum(math.comb(n, i) for i in range(min(k, n) + 1))
        return total / (1 << n)  # a true division of exact integers
    return float(sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(min(k, n) + 1)))


def mcnemar_exact(outcomes: Sequence[Outcome]) -> tuple[int, int, float]:
    """``(b, c, p)``: discordant counts (B-only successes, A-only successes) and the two-sided exact p."""
    b = sum(o.b_only for o in outcomes)
    c = sum(o.a_only for o in outcomes)
    if b + c == 0:
        return b, c, 1.0
    return b, c, min(1.0, 2 * binomial_cdf(min(b, c), b + c))


def _crossing(c: float, info: Sequence[float]) -> float:
    """P(crossing either O'Brien-Fleming boundary c/sqrt(t)) under H0, two looks (numerical integration)."""
    t1, t2 = info
    b1, b2 = c / math.sqrt(t1), c / math.sqrt(t2)
    rho = math.sqrt(t1 / t2)
    z = np.linspace(-b1, b1, 20001)
    density = np.exp(-(z**2) / 2) / math.sqrt(2 * math.pi)
    sd = math.sqrt(1 - rho * rho)
    erf = np.vectorize(math.erf)
    inside = 0.5 * (erf((b2 - rho * z) / (sd * math.sqrt(2))) - erf((-b2 - rho * z) / (sd * math.sqrt(2))))
    stay = float(np.trapezoid(density * inside, z))
    return 1 - stay


def obrien_fleming(alpha: float = 0.05, info: Sequence[float] = (0.5, 1.0)) -> tuple[float, float]:
    """Two-sided O'Brien-Fleming boundaries for two looks at the given information fractions."""
    low, high = 1.0, 5.0
    for _ in range(60):
        mid = (low + high) / 2
        if _crossing(mid, info) > alpha:
            low = mid
        else:
            high = mid
    c = (low + high) / 2
    return c / math.sqrt(info[0]), c / math.sqrt(info[1])


def paired_bootstrap(
    outcomes: Sequence[Outcome],
    *,
    resamples: int = 10000,
    seed: int = 0,
    level: float = 0.95,
    cost: bool = False,
) -> tuple[float, float | None, float | None, float]:
    """``(difference, low, high, se)`` of mean(B - A) (or of the spend) by repository-cluster bootstrap."""
    diff = _differences(outcomes, cost)
    groups = [o.group for o in outcomes]
    point = float(diff.mean()) if len(diff) else 0.0
    values: list[float] = []

    def stat(idx: np.ndarray) -> float:
        value = float(diff[idx].mean())
        values.append(value)
        return value

    tail = (1 - level) / 2
    cluster_bootstrap(groups, stat, resamples=resamples, seed=seed)
    if not values:
        return point, None, None, 0.0
    low, high = np.quantile(values, [tail, 1 - tail])
    return point, float(low), float(high), _standard_error(values)


def _differences(outcomes: Sequence[Outcome], cost: bool) -> NDArray[np.float64]:
    """Each unit's B - A: of success, or of spend when ``cost``."""
    return np.array([(o.usd_b - o.usd_a) if cost else (o.b - o.a) for o in outcomes], dtype=np.float64)


def _standard_error(values: Sequence[float]) -> float:
    """The spread of the resampled means (0 with fewer than two)."""
    return float(np.std(values, ddof=1)) if len(values) > 1 else 0.0


@dataclass(frozen=True)
class Look:
    """One interim or final look: the estimate, its interval, z and the boundary."""

    look: int
    repositories: int
    units: int
    estimate: float
    low: float | None
    high: float | None
    z: float
    boundary: float
    crossed: bool

    @property
    def above_zero(self) -> bool:
        """Whether the interval on B - A lies above 0 (B better)."""
        return self.low is not None and self.low > 0

    @property
    def below_zero(self) -> bool:
        """Whether the interval on B - A lies below 0 (B worse)."""
        return self.high is not None and self.high < 0


def analyse(
    outcomes: Sequence[Outcome],
    *,
    seed: int = 0,
    resamples: int = 10000,
    cost_only: bool = False,
    margin: float = 0.05,
    incomplete: str | None = None,
) -> dict[str, Any]:
    """Both looks, McNemar, TOST where asked, and the decision (none when an arm is incomplete)."""
    groups = seeded_order(sorted({o.group for o in outcomes}), seed, "looks")
    looks = _looks(outcomes, groups, resamples, seed)
    stopped = _stopped(looks)
    b, c, p = mcnemar_exact(outcomes)
    out: dict[str, Any] = {
        "units": len(outcomes),
        "repositories": len(groups),
        "looks": [vars(look) for look in looks],
        "stopped_at_look": stopped.look,
        "mcnemar": {"b_only": b, "a_only": c, "p": p},
        "spend": _spend(outcomes),
    }
    if cost_only:
        out["tost"] = _tost(outcomes, resamples, seed, margin)
    if incomplete is not None:
        out["decision"], out["incomplete"] = None, incomplete
        return out
    out["decision"] = _decide(stopped, out.get("tost"), margin)
    return out


def _looks(outcomes: Sequence[Outcome], groups: Sequence[str], resamples: int, seed: int) -> list[Look]:
    """The interim look on the first half of the groups (seeded order), and the final look on all of them."""
    half = set(groups[: max(1, len(groups) // 2)])
    bounds = obrien_fleming()
    subsets = ([o for o in outcomes if o.group in half], list(outcomes))
    return [
        _look(i, subset, boundary, resamples, seed)
        for i, (subset, boundary) in enumerate(zip(subsets, bounds, strict=True), 1)
    ]


def _stopped(looks: Sequence[Look]) -> Look:
    """The look the experiment stops at: the interim one when it crossed its boundary, else the final one."""
    return looks[0] if looks[0].crossed else looks[1]


def _spend(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """What each arm cost, in dollars."""
    return {"A": round(sum(o.usd_a for o in outcomes), 6), "B": round(sum(o.usd_b for o in outcomes), 6)}


def _look(i: int, subset: Sequence[Outcome], boundary: float, resamples: int, seed: int) -> Look:
    """One interim look: the paired estimate on ``subset`` and whether its z crosses the boundary."""
    est, low, high, se = paired_bootstrap(subset, resamples=resamples, seed=seed)
    z = est / se if se > 0 else (0.0 if est == 0 else math.copysign(math.inf, est))
    return Look(
        i, len({o.group for o in subset}), len(subset), est, low, high, z, boundary, abs(z) >= boundary
    )


def _tost(outcomes: Sequence[Outcome], resamples: int, seed: int, margin: float) -> dict[str, Any]:
    """Two one-sided tests for a cost-only change: the 90% interval of the difference and of the cost."""
    d, lo90, hi90, _ = paired_bootstrap(outcomes, resamples=resamples, seed=seed, level=0.90)
    cd, clo, chi, _ = paired_bootstrap(outcomes, resamples=resamples, seed=seed, cost=True)
    return {
        "difference": d,
        "low90": lo90,
        "high90": hi90,
        "margin": margin,
        "cost_difference": cd,
        "cost_low": clo,
        "cost_high": chi,
    }


def _decide(look: Look, tost: dict[str, Any] | None, margin: float) -> Decision:
    if look.above_zero:
        return "adopt"
    if look.below_zero:
        return "reject"
    if tost is not None and _equivalent(tost, margin):
        return "equivalent"
    return "inconclusive"


def _equivalent(tost: dict[str, Any], margin: float) -> bool:
    """Within the margin either way, and cheaper."""
    return (
        tost["low90"] is not None
        and tost["cost_high"] is not None
        and -margin <= tost["low90"]
        and tost["high90"] <= margin
        and tost["cost_high"] < 0
    )

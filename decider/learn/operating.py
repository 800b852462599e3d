"""Operating points from calibrated probabilities: BLOCK by a Wilson bound on precision, ADVISORY by recall.

BLOCK is the lowest threshold whose precision among delta units has a Wilson 95% lower bound ≥ 0.95,
counting only units whose majority verdict is not ``unsure``; when none exists BLOCK is not offered
(``precision_unreachable``). ADVISORY is the highest threshold that still reaches recall ≥ 0.90. Both are
chosen on the predictions of the other folds than the one they are applied to.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = ["Z95", "OperatingPoints", "Scored", "choose_points", "wilson_interval"]

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Scored:
    """One unit's calibrated probability, label and whether its majority verdict is ``unsure``."""

    p: float
    y: int
    unsure: bool = False


@dataclass(frozen=True)
class OperatingPoints:
    """The two thresholds; ``block`` is None when not offered, with the reason."""

    block: float | None
    advisory: float | None
    block_reason: str | None = None
    target_precision: float = 0.95
    target_recall: float = 0.90

    def action(self, p: float | None, unsure: bool = False) -> str:
        """BLOCK, ADVISORY or DROP for one probability (``unsure`` never reaches BLOCK)."""
        if p is None:
            return "ADVISORY"
        if self._blocks(p, unsure):
            return "BLOCK"
        if self.advisory is not None and p >= self.advisory:
            return "ADVISORY"
        return "DROP"

    def _blocks(self, p: float, unsure: bool) -> bool:
        """Whether a sure answer reaches the BLOCK threshold (when one is offered)."""
        return self.block is not None and p >= self.block and not unsure


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a proportion (``(0, 1)`` when ``n`` is 0)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _cumulative(ordered: Sequence[Scored]) -> Iterator[tuple[float, int, int, int]]:
    """Each threshold from the highest down, with the counts at or above it: true positives, sure units,
    sure true positives."""
    tp_sure = n_sure = tp_all = 0
    i = 0
    while i < len(ordered):
        t = ordered[i].p
        while i < len(ordered) and ordered[i].p == t:
            unit = ordered[i]
            tp_all += unit.y
            if not unit.unsure:
                n_sure += 1
                tp_sure += unit.y
            i += 1
        yield t, tp_all, n_sure, tp_sure


def choose_points(
    scored: Sequence[Scored], *, precision: float = 0.95, recall: float = 0.90
) -> OperatingPoints:
    """BLOCK and ADVISORY thresholds on ``scored`` (the other folds' predictions)."""
    ordered = sorted(scored, key=lambda s: -s.p)
    positives = _positives(ordered)
    block = advisory = None
    for t, tp_all, n_sure, tp_sure in _cumulative(ordered):
        if _precise(tp_sure, n_sure, precision):
            block = t  # keeps lowering while the bound holds: the lowest such threshold wins
        if advisory is None and _recalls(tp_all, positives, recall):
            advisory = t  # the first (highest) threshold reaching the recall target
    return OperatingPoints(
        block=block,
        advisory=advisory,
        block_reason=_block_reason(block),
        target_precision=precision,
        target_recall=recall,
    )


def _positives(scored: Sequence[Scored]) -> int:
    """How many units are positive."""
    return sum(1 for s in scored if s.y == 1)


def _precise(tp_sure: int, n_sure: int, precision: float) -> bool:
    """Whether the Wilson lower bound on the sure units' precision reaches the target (no sure unit: no)."""
    return n_sure > 0 and wilson_interval(tp_sure, n_sure)[0] >= precision


def _recalls(tp_all: int, positives: int, recall: float) -> bool:
    """Whether the true positives reach the recall target (no positive: never)."""
    return positives > 0 and tp_all / positives >= recall


def _block_reason(block: float | None) -> str | None:
    return None if block is not None else "precision_unreachable"

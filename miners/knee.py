"""Choosing a knee: the one rule the backtest (κ*) and the PBO guard (the in-sample best) share.

A candidate κ is judged on a set of labelled instances by its confusion counts: flagged and labelled
``+`` is a true positive, flagged and ``-`` a false positive, ``+`` and not flagged a false negative.
The choice is ``argmax precision s.t. FN = 0``, ties to the smallest κ (it fires earliest). A knee
that flags nothing raises no false alarm, so its precision is taken as 1: on a record with no
positive the choice is the smallest knee that stays quiet.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from ouroboros_gates.miners.datalog import Value

__all__ = ["Confusion", "best_knee", "confusion", "performance"]


@dataclass(frozen=True)
class Confusion:
    """True positives, false positives and false negatives of one knee on some instances, in order."""

    tp: tuple[str, ...]
    fp: tuple[str, ...]
    fn: tuple[str, ...]

    @property
    def precision(self) -> float:
        """TP / (TP + FP); 1 when nothing is flagged (no false alarm)."""
        flagged = len(self.tp) + len(self.fp)
        return len(self.tp) / flagged if flagged else 1.0


def confusion(flagged: Collection[str], instances: Iterable[str], positives: Collection[str]) -> Confusion:
    """The confusion counts of ``flagged`` on ``instances`` (kept in their order)."""
    hits, misses = _split(instances, flagged)
    tp, fp = _split(hits, positives)
    fn, _ = _split(misses, positives)
    return Confusion(tp=tp, fp=fp, fn=fn)


def _split(items: Iterable[str], group: Collection[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``items`` in ``group`` and those not, each in their order."""
    inside: list[str] = []
    outside: list[str] = []
    for item in items:
        (inside if item in group else outside).append(item)
    return tuple(inside), tuple(outside)


def performance(result: Confusion) -> tuple[int, float]:
    """A sortable score, higher is better: no missed offense first, then precision."""
    return (-len(result.fn), result.precision)


def best_knee(
    flags: Mapping[Value, Collection[str]], instances: Collection[str], positives: Collection[str]
) -> Value | None:
    """``argmax precision s.t. FN = 0`` over the candidates (``flags``: κ → flagged instances) on
    ``instances``, ties to the smallest; None when no candidate misses nothing."""
    precisions = _precisions_missing_nothing(flags, instances, positives)
    return max(precisions, key=precisions.__getitem__, default=None)  # the first, smallest, of equals


def _precisions_missing_nothing(
    flags: Mapping[Value, Collection[str]], instances: Collection[str], positives: Collection[str]
) -> dict[Value, float]:
    """The precision of each candidate that misses no offense, smallest κ first."""
    precisions: dict[Value, float] = {}
    for kappa in sorted(flags):
        result = confusion(flags[kappa], instances, positives)
        if not result.fn:
            precisions[kappa] = result.precision
    return precisions

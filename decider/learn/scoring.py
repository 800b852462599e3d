"""What a program under evaluation gives: a ``Score`` per unit from a ``Scorer`` called with the unit's fold,
kept as a ``Raw`` row with the fold it was scored in."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ouroboros_gates.decider.learn.folds import Fold
from ouroboros_gates.decider.learn.labels import LabelledUnit

__all__ = ["ALL", "Raw", "Score", "Scorer", "score_folds"]

ALL = "*"


@dataclass(frozen=True)
class Score:
    """A program's raw score for one unit, whether its majority verdict is ``unsure``, and what it cost."""

    s: float
    unsure: bool = False
    usd: float = 0.0
    cached: bool = True
    reach_miss: bool = False  # no instrument surfaced the unit: DROP, counted against recall


class Scorer(Protocol):
    """A program under evaluation."""

    def __call__(self, unit: LabelledUnit, fold: Fold, /) -> Score: ...


@dataclass(frozen=True)
class Raw:
    """A scored unit before calibration."""

    unit: LabelledUnit
    fold: str
    score: Score


def score_folds(
    units: Sequence[LabelledUnit],
    folds: Sequence[Fold],
    scorer: Scorer,
    progress: Callable[[int, int], None] | None = None,
) -> list[Raw]:
    """Score every unit of every evaluated fold, with that fold's memory boundary."""
    out: list[Raw] = []
    pending = _pending(units, folds)
    for i, (u, f) in enumerate(pending):
        out.append(Raw(u, f.name, scorer(u, f)))
        if progress is not None:
            progress(i + 1, len(pending))
    return out


def _pending(units: Sequence[LabelledUnit], folds: Sequence[Fold]) -> list[tuple[LabelledUnit, Fold]]:
    """Each unit of each evaluated fold's evaluation groups, with its fold (a fold at a time)."""
    return [(u, f) for f in folds if f.insufficient is None for u in units if u.group in f.eval_groups]

"""Cost folding for cumulative counters that restart when a process is reopened.

Claude Code reports ``total_cost_usd`` cumulatively within one process and from zero again when the
process is reopened (``--resume``), so a drop marks a new process whose predecessor's last value was its
total: cost = the sum, over the maximal non-decreasing runs of the sequence, of each run's maximum.
Several sessions interleaved in one file are separate counters: fold each on its own, then add.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

__all__ = ["CostFold", "SessionCosts", "fold_cumulative"]


@dataclass
class CostFold:
    """The fold of one cumulative counter, fed one value at a time (constant memory)."""

    closed: float = 0.0
    last: float | None = None

    def add(self, value: float) -> None:
        """Take the next reading; a drop closes the previous run at its last (largest) value."""
        if self.last is not None and value < self.last:
            self.closed += self.last
        self.last = value

    @property
    def total(self) -> float:
        """Sum of the maxima of the runs seen so far."""
        return self.closed + (self.last or 0.0)


@dataclass
class SessionCosts:
    """One ``CostFold`` per session, so that interleaved sessions never look like restarts."""

    folds: dict[Hashable, CostFold] = field(default_factory=dict)

    def add(self, session: Hashable, value: float) -> None:
        """Take a reading of ``session``'s counter."""
        self.folds.setdefault(session, CostFold()).add(value)

    @property
    def total(self) -> float | None:
        """The folded cost over every session, or None when no reading was seen."""
        return sum(fold.total for fold in self.folds.values()) if self.folds else None


def fold_cumulative(values: Iterable[float]) -> float:
    """Sum of the maximum of each non-decreasing run of one cumulative counter."""
    fold = CostFold()
    for value in values:
        fold.add(value)
    return fold.total

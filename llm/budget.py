"""A spending budget: USD and call ceilings, reserve before a call and settle after it.

Each call reserves its worst case under a lock before it is sent and settles at the price of the usage the
provider reported, so N concurrent callers can never pass a ceiling together. One budget may be shared by
several clients (a run's chat and embedding calls under one ceiling).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ouroboros_gates.llm.errors import BudgetExhausted

__all__ = ["Budget", "Reservation"]


class Reservation:
    """One reserved call; ``cost_usd`` is set once its usage is priced (0 when it never got an answer)."""

    def __init__(self, usd: float) -> None:
        self.usd = usd
        self.cost_usd = 0.0


class Budget:
    """USD and call ceilings (None: no ceiling) with what was spent, reserved and called so far."""

    def __init__(self, usd_ceiling: float | None = None, call_ceiling: int | None = None) -> None:
        self.usd_ceiling = usd_ceiling
        self.call_ceiling = call_ceiling
        self.spent_usd = 0.0
        self.calls = 0
        self._reserved_usd = 0.0
        self._in_flight = 0
        self._lock = threading.Lock()

    @contextmanager
    def reserve(self, usd: float) -> Iterator[Reservation]:
        """Hold ``usd`` and one call for the block; settle at ``reservation.cost_usd`` when it ends."""
        reservation = Reservation(usd)
        with self._lock:
            if self.call_ceiling is not None and self.calls + self._in_flight >= self.call_ceiling:
                raise BudgetExhausted("calls", self.calls + self._in_flight, self.call_ceiling)
            committed = self.spent_usd + self._reserved_usd
            if self.usd_ceiling is not None and committed + usd > self.usd_ceiling:
                raise BudgetExhausted("usd", round(committed, 6), self.usd_ceiling)
            self._reserved_usd += usd
            self._in_flight += 1
        try:
            yield reservation
        finally:
            with self._lock:
                self._reserved_usd = max(self._reserved_usd - usd, 0.0)
                self._in_flight -= 1
                self.calls += 1
                self.spent_usd += reservation.cost_usd

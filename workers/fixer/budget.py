"""A fixer's spend: the budget it reserves before launch and settles after, and its folded cost.

The atomic reservation lives with its tables in ``events.budget``; this module adds the fold of a
session's stream-json lines (``total_cost_usd`` per process, restarting from zero on reopen) with
``harness.cost``, so the same rule that prices an ingested run prices a live session.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TypeGuard

from ouroboros_gates.events import SideTables
from ouroboros_gates.events.budget import Budget
from ouroboros_gates.harness.cost import SessionCosts
from ouroboros_gates.schemas.settings import Settings

__all__ = ["LiveCost", "budget_for", "folded_cost"]


def budget_for(side: SideTables, settings: Settings) -> Budget:
    """The daily budget under ``OURO_FIXER_DAILY_CAP_USD`` on days of ``OURO_TIMEZONE``."""
    return Budget(side, settings.fixer_daily_cap_usd, settings.timezone)


class LiveCost:
    """The cost of a session so far, fed its stream-json lines as they arrive."""

    def __init__(self) -> None:
        self._costs = SessionCosts()

    def feed(self, line: str | bytes) -> None:
        """Take one output line; anything that is not a JSON object with a cost is ignored."""
        try:
            doc = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            return
        if not isinstance(doc, dict):
            return
        value = doc.get("total_cost_usd")
        if _is_cost(value):
            self._costs.add(doc.get("session_id") or "", float(value))

    @property
    def seen(self) -> bool:
        """Whether any cost reading came."""
        return self._costs.total is not None

    @property
    def total(self) -> float:
        """Sum over the session's processes of each one's last cumulative cost."""
        return self._costs.total or 0.0


def _is_cost(value: object) -> TypeGuard[float]:
    """Whether a reading's ``total_cost_usd`` is a cost: a number (not a boolean), never negative."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def folded_cost(lines: Iterable[str | bytes]) -> float:
    """The folded cost of a whole session's output."""
    live = LiveCost()
    for line in lines:
        live.feed(line)
    return live.total

"""The ledger: every table of the log and of its projections, on one metadata."""

from __future__ import annotations

from ouroboros_gates.events import budget as _budget  # noqa: F401  (the fixers' budget tables)
from ouroboros_gates.events import memory_tables as _memory_tables  # noqa: F401  (the decider's memory tables)
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.tables import metadata

__all__ = ["PROJECTIONS", "metadata"]

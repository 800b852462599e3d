"""The ledger: every table of the log and of its projections, on one metadata."""

from __future__ import annotations

from events import budget as _budget  # noqa: F401  (the fixers' budget tables)
from events import memory_tables as _memory_tables  # noqa: F401  (the decider's memory tables)
from events.projections import PROJECTIONS
from events.tables import metadata

__all__ = ["PROJECTIONS", "metadata"]

"""The ledger: every table of the log and of its projections, on one metadata."""

from __future__ import annotations

from events.projections import PROJECTIONS
from events.tables import metadata

__all__ = ["PROJECTIONS", "metadata"]

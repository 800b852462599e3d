"""The ledger's projections, one module per table family."""

from __future__ import annotations

from ouroboros_gates.events.projections import (
    actions,
    decisions,
    faults,
    findings,
    labels,
    loop,
    proposals,
    runs,
)
from ouroboros_gates.events.projections.base import RowProjection

__all__ = ["PROJECTIONS", "RowProjection"]

#: Every projection, in the order they are folded.
PROJECTIONS: tuple[RowProjection, ...] = (
    runs.projection,
    findings.projection,
    proposals.proposals_projection,
    proposals.verdicts_projection,
    labels.requests_projection,
    labels.labels_projection,
    labels.labeler_runs_projection,
    loop.fixer_sessions_projection,
    loop.merges_projection,
    loop.closed_projection,
    loop.series_projection,
    decisions.projection,
    faults.projection,
    actions.retries_projection,
    actions.dismissals_projection,
    actions.reviews_projection,
    actions.replays_projection,
)

"""Celery task of the decider (thin: validate, decide with the core, append)."""

from __future__ import annotations

from ouroboros_gates.schemas import DecidePush
from ouroboros_gates.workers.decider.core import decide_push
from ouroboros_gates.workers.shell import Context, Outcome, fleet_task


@fleet_task(DecidePush)
def decide(message: DecidePush, ctx: Context) -> Outcome:
    """decider.decide: one ``DecisionMade`` per candidate of the push, on ``push/<head>``."""
    stream, decisions = decide_push(message, ctx.settings, ctx.store)
    return Outcome.single(stream, *decisions)

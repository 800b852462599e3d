"""The fixer: one sandboxed agent session per launched ticket, under the daily budget."""

from __future__ import annotations

from ouroboros_gates.workers.fixer.budget import LiveCost, budget_for, folded_cost
from ouroboros_gates.workers.fixer.sandbox import AGENT_SECRETS, Sandbox, find_sandbox
from ouroboros_gates.workers.fixer.session import (
    SessionPlan,
    SessionRun,
    brief_for,
    outcome_of,
    plan_session,
    run_session,
)

__all__ = [
    "AGENT_SECRETS",
    "LiveCost",
    "Sandbox",
    "SessionPlan",
    "SessionRun",
    "brief_for",
    "budget_for",
    "find_sandbox",
    "folded_cost",
    "outcome_of",
    "plan_session",
    "run_session",
]

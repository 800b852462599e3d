"""The fixer: one sandboxed agent session per launched ticket, under the daily budget."""

from __future__ import annotations

from ouroboros_gates.workers.fixer.budget import LiveCost, budget_for, folded_cost
from ouroboros_gates.workers.fixer.proxy import AllowedHost, allowed_hosts, parse_hosts
from ouroboros_gates.workers.fixer.sandbox import AGENT_SECRETS, AGENT_UID, Mounts, Sandbox, find_sandbox
from ouroboros_gates.workers.fixer.session import (
    ForgePaths,
    SessionPlan,
    SessionRun,
    brief_for,
    outcome_of,
    plan_session,
    run_session,
)

__all__ = [
    "AGENT_SECRETS",
    "AGENT_UID",
    "AllowedHost",
    "ForgePaths",
    "LiveCost",
    "Mounts",
    "Sandbox",
    "SessionPlan",
    "SessionRun",
    "allowed_hosts",
    "brief_for",
    "budget_for",
    "find_sandbox",
    "folded_cost",
    "outcome_of",
    "parse_hosts",
    "plan_session",
    "run_session",
]

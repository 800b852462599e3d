"""The decider's instruments: quick rules, Bandit, repository facts, wrapper roles and delta features."""

from __future__ import annotations

from ouroboros_gates.decider.instruments.bandit_tool import BanditIssue, bandit_scan, bandit_version
from ouroboros_gates.decider.instruments.base import Signal
from ouroboros_gates.decider.instruments.delta import DeltaFacts, delta_facts, delta_state
from ouroboros_gates.decider.instruments.facts import CallGraph, FunctionFacts, build_call_graph
from ouroboros_gates.decider.instruments.families import Families, families, lexicon, untagged_symbols
from ouroboros_gates.decider.instruments.roles import (
    FunctionRoles,
    RoleEntry,
    RoleUse,
    infer_roles,
    vocabulary,
)
from ouroboros_gates.decider.instruments.rules import (
    Priors,
    QuickHit,
    QuickRule,
    RulesetError,
    load_rules,
    prior_active,
    quick_scan,
)

__all__ = [
    "BanditIssue",
    "CallGraph",
    "DeltaFacts",
    "Families",
    "FunctionFacts",
    "FunctionRoles",
    "Priors",
    "QuickHit",
    "QuickRule",
    "RoleEntry",
    "RoleUse",
    "RulesetError",
    "Signal",
    "bandit_scan",
    "bandit_version",
    "build_call_graph",
    "delta_facts",
    "delta_state",
    "families",
    "infer_roles",
    "lexicon",
    "load_rules",
    "prior_active",
    "quick_scan",
    "untagged_symbols",
    "vocabulary",
]

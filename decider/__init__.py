"""The decider: candidates from a push or a scan, our instruments, allow-listed feature records, the example
memory, retrieval, the decision program and the decisions with their reports."""

from __future__ import annotations

from ouroboros_gates.decider.analyse import Analysed, analyse, candidates
from ouroboros_gates.decider.assemble import build_engine
from ouroboros_gates.decider.decide import Engine, decide_all
from ouroboros_gates.decider.features import FEATURES, FeatureSpec, feature_set_digest, validate_record
from ouroboros_gates.decider.instruments import Signal
from ouroboros_gates.decider.memory import Memory, MemoryExample, MemoryStore, example_from_record
from ouroboros_gates.decider.program import OperatingPoint, Program
from ouroboros_gates.decider.push import decide_repository
from ouroboros_gates.decider.report import write_reports
from ouroboros_gates.decider.retrieve import eligible

__all__ = [
    "FEATURES",
    "Analysed",
    "Engine",
    "FeatureSpec",
    "Memory",
    "MemoryExample",
    "MemoryStore",
    "OperatingPoint",
    "Program",
    "Signal",
    "analyse",
    "build_engine",
    "candidates",
    "decide_all",
    "decide_repository",
    "eligible",
    "example_from_record",
    "feature_set_digest",
    "validate_record",
    "write_reports",
]

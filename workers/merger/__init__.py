"""The merger: the merge train (NO-SELF-MERGE, once per head, one refusal comment) and the close-ticket
gate."""

from __future__ import annotations

from ouroboros_gates.workers.merger.close import (
    CloseVerdict,
    close_ticket,
    close_verdict,
    closed_event,
    closes_ticket,
)
from ouroboros_gates.workers.merger.core import train_writes, tried_heads
from ouroboros_gates.workers.merger.gate import checks_gate, command_gate, default_gate, make_gate
from ouroboros_gates.workers.merger.train import (
    MERGER,
    GateResult,
    TrainStep,
    merger_identity,
    ready_pulls,
    refusal_comment,
    run_train,
    self_merge_lines,
)

__all__ = [
    "MERGER",
    "CloseVerdict",
    "GateResult",
    "TrainStep",
    "checks_gate",
    "close_ticket",
    "close_verdict",
    "closed_event",
    "closes_ticket",
    "command_gate",
    "default_gate",
    "make_gate",
    "merger_identity",
    "ready_pulls",
    "refusal_comment",
    "run_train",
    "self_merge_lines",
    "train_writes",
    "tried_heads",
]

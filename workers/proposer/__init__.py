"""The proposer: asks the model, one call per batch of mining tickets, for a miner proposal per ticket, and
posts each as the proposal comment the pre-check reads; the census measures proposals against the contract.

``prompt`` holds the shared prefix (byte-identical across calls) and the batch message; ``propose`` the
calls, their cost rows and the comments; ``census`` whether an existing extractor reaches TP > 0.
"""

from __future__ import annotations

from ouroboros_gates.workers.proposer.census import TEMPLATE, CensusRow, census_row, count
from ouroboros_gates.workers.proposer.prompt import SCHEMA, batch_message, build_request, shared_prefix
from ouroboros_gates.workers.proposer.propose import BATCH_SIZE, Batch, Draft, draft, post, propose

__all__ = [
    "BATCH_SIZE",
    "SCHEMA",
    "TEMPLATE",
    "Batch",
    "CensusRow",
    "Draft",
    "batch_message",
    "build_request",
    "census_row",
    "count",
    "draft",
    "post",
    "propose",
    "shared_prefix",
]

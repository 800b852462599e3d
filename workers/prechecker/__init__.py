"""The prechecker: at no model cost, does a ticket's latest proposal name a real instance its extractor reads?

``proposal`` is the format of the proposal comment (the fenced block the loop posts; the proposer and the
labeler write it, the pre-check reads it); ``check`` is the pure verdict; ``record`` what is appended;
``sources`` the runs and miners it looks at. The Celery tasks are in ``tasks``.
"""

from __future__ import annotations

from ouroboros_gates.workers.prechecker.check import (
    MINING_LABEL,
    Precheck,
    instance_problem,
    is_mining,
    latest_proposal,
    mining_tickets,
    precheck,
)
from ouroboros_gates.workers.prechecker.proposal import (
    FENCE,
    ProposalBlock,
    ProposalFormatError,
    find_block,
    has_block,
    parse_proposal,
    render_proposal,
)
from ouroboros_gates.workers.prechecker.record import (
    label_message,
    new_events,
    precheck_message,
    ticket_stream,
)
from ouroboros_gates.workers.prechecker.sources import RunIndex, registered_kinds

__all__ = [
    "FENCE",
    "MINING_LABEL",
    "Precheck",
    "ProposalBlock",
    "ProposalFormatError",
    "RunIndex",
    "find_block",
    "has_block",
    "instance_problem",
    "is_mining",
    "label_message",
    "latest_proposal",
    "mining_tickets",
    "new_events",
    "parse_proposal",
    "precheck",
    "precheck_message",
    "registered_kinds",
    "render_proposal",
    "ticket_stream",
]

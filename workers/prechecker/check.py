"""The pre-check: does a ticket's latest proposal name at least one real instance its extractor can read?

No model is called. A named instance counts when it exists and is of a kind the proposed extractor reads
(the registered miner's ``CORPUS`` when the proposal names a registered miner, else the proposal's own):

- ``jsonl``: a run id recorded in the event log or a run directory under the state and corpus roots;
- ``issue`` and ``pull_request``: ``#N``, an existing issue or pull request other than the ticket itself;
- ``file_at``: a commit of the repository.

At least one → ``launch``; none, no proposal, or a malformed one → ``needs_labels`` with a
``LabelRequest`` naming the instances that named nothing. Pure: the forge and the run index are given.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from ouroboros_gates.forge import Comment, Forge, Ticket
from ouroboros_gates.forge.base import COMMIT_NAME
from ouroboros_gates.schemas import CorpusKind, LabelRequest, PrecheckOutcome, PrecheckVerdict, Proposal
from ouroboros_gates.schemas.kinds import RUN_ID_PATTERN
from ouroboros_gates.workers.prechecker.proposal import ProposalFormatError, has_block, parse_proposal

__all__ = [
    "MINING_LABEL",
    "Precheck",
    "instance_problem",
    "is_mining",
    "latest_proposal",
    "mining_tickets",
    "precheck",
]

MINING_LABEL = "mining"
"""The label that makes a ticket a mining ticket."""

_ISSUE = re.compile(r"^#([1-9][0-9]*)$")
_RUN = re.compile(RUN_ID_PATTERN)


@dataclass(frozen=True)
class Precheck:
    """The verdict, the proposal it judged (None when there was none or it was malformed), and the
    label request when the verdict is ``needs_labels``."""

    verdict: PrecheckVerdict
    proposal: Proposal | None
    request: LabelRequest | None


def is_mining(ticket: Ticket) -> bool:
    """An open ticket labelled ``mining``."""
    return ticket.state == "open" and MINING_LABEL in ticket.labels


def mining_tickets(forge: Forge, numbers: Sequence[int]) -> list[Ticket]:
    """The tickets numbered, or every open mining ticket when none is."""
    return [forge.ticket(n) for n in numbers] if numbers else [t for t in forge.tickets() if is_mining(t)]


def latest_proposal(ticket: Ticket) -> Comment | None:
    """The ticket's last comment that opens a proposal block."""
    return next((c for c in reversed(ticket.comments) if has_block(c.body)), None)


def instance_problem(
    instance: str, kinds: Sequence[CorpusKind], ticket: int, forge: Forge, has_run: Callable[[str], bool]
) -> str | None:
    """None when ``instance`` exists as one of ``kinds``; else why not, in a few words."""
    reasons: list[str] = []
    for kind in kinds:
        problem = _PROBLEMS[kind](instance, ticket, forge, has_run)
        if problem is None:
            return None
        reasons.append(problem)
    return "; ".join(dict.fromkeys(reasons))


def _run_problem(instance: str, ticket: int, forge: Forge, has_run: Callable[[str], bool]) -> str | None:
    """``jsonl``: a run id the log has a run of."""
    return None if _RUN.match(instance) and has_run(instance) else "no run of that id"


def _issue_problem(instance: str, ticket: int, forge: Forge, has_run: Callable[[str], bool]) -> str | None:
    """``issue``/``pull_request``: ``#N`` the forge holds, other than the ticket itself."""
    match = _ISSUE.match(instance)
    if match is None:
        return "not #N"
    if int(match.group(1)) == ticket:
        return "the ticket itself"
    return None if forge.exists(instance) else "no such issue or pull request"


def _commit_problem(instance: str, ticket: int, forge: Forge, has_run: Callable[[str], bool]) -> str | None:
    """``file_at``: a commit sha the repository holds."""
    if not COMMIT_NAME.fullmatch(instance):
        return "not a commit sha"
    return None if forge.has_commit(instance) else "no such commit"


_PROBLEMS: dict[CorpusKind, Callable[[str, int, Forge, Callable[[str], bool]], str | None]] = {
    CorpusKind.JSONL: _run_problem,
    CorpusKind.ISSUE: _issue_problem,
    CorpusKind.PULL_REQUEST: _issue_problem,
    CorpusKind.FILE_AT: _commit_problem,
}
"""Why an instance is not one of each corpus kind (None when it is)."""


def precheck(
    ticket: Ticket,
    forge: Forge,
    has_run: Callable[[str], bool],
    registered: Mapping[str, Sequence[str]],
    at: datetime,
) -> Precheck:
    """Judge the ticket's latest proposal (``registered``: miner name → the corpus kinds it reads)."""
    comment = latest_proposal(ticket)
    if comment is None:
        return _needs(ticket.number, None, None, (), (), "no proposal comment on the ticket", at)
    try:
        proposal = parse_proposal(
            comment.body, ticket=ticket.number, comment_id=comment.id, posted_at=comment.created_at
        )
    except ProposalFormatError as exc:
        return _needs(ticket.number, comment.id, None, (), (), f"malformed proposal: {exc}", at)
    kinds = _kinds(proposal, registered)
    problems = {i: instance_problem(i, kinds, ticket.number, forge, has_run) for i in proposal.instances}
    found, missing, why_not = _found_and_missing(proposal, problems)
    shown = "/".join(kind.value for kind in kinds)
    if found:
        verdict = PrecheckVerdict(
            ticket=ticket.number,
            proposal=comment.id,
            miner=proposal.miner,
            verdict=PrecheckOutcome.LAUNCH,
            instances_named=proposal.instances,
            instances_found=found,
            reason=_found_reason(proposal, found, shown, missing, why_not),
        )
        return Precheck(verdict, proposal, None)
    reason = _none_found_reason(proposal, shown, why_not)
    return _needs(ticket.number, comment.id, proposal, proposal.instances, kinds, reason, at)


def _found_reason(
    proposal: Proposal, found: tuple[str, ...], shown: str, missing: tuple[str, ...], why_not: str
) -> str:
    """A launch's reason: how many named instances exist, and why the others do not."""
    reason = f"{len(found)} of {len(proposal.instances)} named {shown} instance(s) exist"
    return f"{reason} (missing {why_not})" if missing else reason


def _none_found_reason(proposal: Proposal, shown: str, why_not: str) -> str:
    """Why no named instance was found: none is named, or why each does not exist."""
    if not proposal.instances:
        return "the proposal names no instance"
    return f"none of {len(proposal.instances)} named {shown} instance(s) exists: {why_not}"


def _found_and_missing(
    proposal: Proposal, problems: Mapping[str, str | None]
) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """The named instances that exist, those that do not, and why not (``instance: problem; …``)."""
    found = tuple(i for i, problem in problems.items() if problem is None)
    missing = tuple(i for i in proposal.instances if problems[i] is not None)
    return found, missing, "; ".join(f"{i}: {problems[i]}" for i in missing)


def _kinds(proposal: Proposal, registered: Mapping[str, Sequence[str]]) -> tuple[CorpusKind, ...]:
    """What the proposed extractor reads: a registered miner's own kinds win over the proposal's."""
    declared = registered.get(proposal.miner)
    if declared is None:
        return proposal.corpus
    known = {kind.value: kind for kind in CorpusKind}
    return tuple(known[name] for name in declared if name in known) or proposal.corpus


def _needs(
    ticket: int,
    comment: int | None,
    proposal: Proposal | None,
    missing: tuple[str, ...],
    kinds: Sequence[CorpusKind],
    reason: str,
    at: datetime,
) -> Precheck:
    miner = proposal.miner if proposal is not None else None
    verdict = PrecheckVerdict(
        ticket=ticket,
        proposal=comment,
        miner=miner,
        verdict=PrecheckOutcome.NEEDS_LABELS,
        instances_named=missing,
        instances_found=(),
        reason=reason,
    )
    request = LabelRequest(
        ticket=ticket,
        proposal=comment,
        miner=miner,
        corpus=tuple(kinds),
        instances=missing,
        reason=reason,
        at=at,
    )
    return Precheck(verdict, proposal, request)

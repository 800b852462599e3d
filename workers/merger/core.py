"""One pass of the train over a forge, as stream writes: the merger's core, shared by task and CLI."""

from __future__ import annotations

from ouroboros_gates.events import EventStore, StreamWrite, utcnow
from ouroboros_gates.forge import WritableForge
from ouroboros_gates.forge.local import LocalForge
from ouroboros_gates.schemas import Event, MergeAttempted, Merged, MergeOutcome, MergeRefused, MergeResult
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.merger.close import close_ticket, closed_event, closes_ticket
from ouroboros_gates.workers.merger.gate import make_gate
from ouroboros_gates.workers.merger.train import merger_identity, ready_pulls, run_train

__all__ = ["train_writes", "tried_heads"]


def tried_heads(forge: WritableForge, store: EventStore) -> set[tuple[int, str]]:
    """(pull request, head) pairs the train already took, from each ready pull request's stream."""
    tried = set()
    for pull in ready_pulls(forge):
        for event in store.read_stream(f"pr/{pull.number}"):
            if event.type == MergeAttempted.TYPE:
                attempted = event.decode_as(MergeAttempted)
                tried.add((attempted.pull_request, attempted.head_sha))
    return tried


def train_writes(forge: WritableForge, store: EventStore, settings: Settings) -> list[StreamWrite]:
    """Run the train once; per head MergeAttempted then Merged or MergeRefused, and a TicketClosed for
    each ticket a merged pull request closes through the close-ticket gate."""
    repository = forge.git_dir() if isinstance(forge, LocalForge) else settings.repository
    gate = make_gate(settings.merge_gate, repository)
    steps = run_train(forge, tried_heads(forge, store), gate, merger_identity(), utcnow)
    writes = []
    for step in steps:
        writes += _step_writes(forge, step.result)
    return writes


def _step_writes(forge: WritableForge, result: MergeResult) -> list[StreamWrite]:
    """One head's MergeAttempted then Merged or MergeRefused; after a merge, the ticket it closes."""
    attempted = MergeAttempted(pull_request=result.pull_request, head_sha=result.head_sha, at=result.at)
    merged = result.outcome is MergeOutcome.MERGED
    done: Event = Merged(result=result) if merged else MergeRefused(result=result)
    writes = [StreamWrite(f"pr/{result.pull_request}", [attempted, done])]
    if merged:
        writes += _closing_writes(forge, result.pull_request)
    return writes


def _closing_writes(forge: WritableForge, pull_number: int) -> list[StreamWrite]:
    """The TicketClosed of the ticket a merged pull request says it closes, when the close-ticket gate
    passes it (the gate comments on the ticket otherwise)."""
    ticket = closes_ticket(forge.pull_request(pull_number))
    if ticket is None:
        return []
    verdict = close_ticket(forge, ticket, pull_number)
    if not verdict.ok:
        return []
    return [StreamWrite(f"ticket/{ticket}", [closed_event(ticket, pull_number, verdict)])]

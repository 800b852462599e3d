"""The pre-check on the example tickets (launch and needs_labels with their reasons), on the kinds a
registered extractor reads, and what a pre-check appends the first time and the next."""

from __future__ import annotations

import shutil
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ouroboros_gates.events import MemoryEventStore, Metadata, StreamWrite
from ouroboros_gates.forge import Comment, LocalForge, Ticket
from ouroboros_gates.schemas import CorpusKind, LabelTicket, PrecheckOutcome, PrecheckTicket, Proposal
from ouroboros_gates.workers.prechecker import (
    RunIndex,
    is_mining,
    label_message,
    new_events,
    precheck,
    registered_kinds,
    render_proposal,
    ticket_stream,
)

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
T0 = datetime(2026, 10, 5, 12, 0, tzinfo=UTC)
RUNS = {path.name for path in (EXAMPLES / "runs").iterdir()}


@pytest.fixture(scope="module")
def forge(tmp_path_factory: pytest.TempPathFactory) -> LocalForge:
    return LocalForge.from_examples(EXAMPLES, tmp_path_factory.mktemp("forge-cache"))


@pytest.fixture(scope="module")
def registered() -> dict[str, tuple[str, ...]]:
    return registered_kinds()


def test_the_example_mining_tickets_get_both_verdicts_with_their_reasons(
    forge: LocalForge, registered: dict[str, tuple[str, ...]]
) -> None:
    got = {
        t.number: precheck(t, forge, RUNS.__contains__, registered, T0)
        for t in forge.tickets()
        if is_mining(t)
    }
    assert sorted(got) == [38, 41, 44, 47, 48, 50, 53]  # #45 (ops) and #46 (LANG) are not mining tickets
    launch = {n for n, r in got.items() if r.verdict.verdict is PrecheckOutcome.LAUNCH}
    assert launch == {38, 41, 50, 53}
    assert got[38].verdict.reason == "4 of 4 named jsonl instance(s) exist"
    assert got[41].verdict.proposal == 3389917035  # the latest proposal, not the one naming a foreign run
    assert got[50].verdict.instances_found == ("#58", "#52")
    assert got[53].verdict.instances_found == ("374fdc4", "31eb1b3")
    assert got[44].verdict.reason == (
        "none of 2 named jsonl instance(s) exists: 5a0e2c7b-93d1-4f6a-8b2e-7c4d1f9a0b33: no run of that id;"
        " e8b1d4f2-0c6a-4e93-a7d5-2b9f3c6e8a10: no run of that id"
    )
    assert got[47].verdict.reason == "none of 1 named issue instance(s) exists: #47: the ticket itself"
    assert got[48].verdict.reason.startswith("malformed proposal: line 6, field instances: malformed TOML")
    assert got[48].verdict.miner is None and got[48].proposal is None
    for number in launch:
        assert got[number].request is None and got[number].proposal is not None
    request = got[44].request
    assert request is not None and request.at == T0
    assert (request.ticket, request.proposal, request.miner) == (44, 3391204417, "self-match")
    assert request.corpus == (CorpusKind.JSONL,) and request.reason == got[44].verdict.reason
    assert request.instances == (
        "5a0e2c7b-93d1-4f6a-8b2e-7c4d1f9a0b33",
        "e8b1d4f2-0c6a-4e93-a7d5-2b9f3c6e8a10",
    )


def _ticket(number: int, *bodies: str) -> Ticket:
    comments = tuple(Comment(id=100 + n, author="loop", created_at=T0, body=b) for n, b in enumerate(bodies))
    return Ticket(number, "t", "b", "open", ("mining",), T0, comments)


def _proposal(miner: str, corpus: tuple[CorpusKind, ...], *instances: str) -> str:
    proposal = Proposal(ticket=1, comment_id=1, miner=miner, corpus=corpus, instances=instances, posted_at=T0)
    return render_proposal(proposal, note="Proposal.")


def test_a_registered_extractor_decides_which_kinds_count(
    forge: LocalForge, registered: dict[str, tuple[str, ...]]
) -> None:
    run = sorted(RUNS)[0]
    # sleep-poll reads jsonl: a pull request it names does not count, whatever the proposal says it reads.
    wrong = precheck(
        _ticket(9, _proposal("sleep-poll", (CorpusKind.PULL_REQUEST,), "#58")),
        forge,
        RUNS.__contains__,
        registered,
        T0,
    )
    assert (
        wrong.verdict.verdict is PrecheckOutcome.NEEDS_LABELS
        and "#58: no run of that id" in wrong.verdict.reason
    )
    # An unregistered miner is held to the kinds it proposes: issue and pull_request accept either.
    mixed = precheck(
        _ticket(
            9, _proposal("new-miner", (CorpusKind.ISSUE, CorpusKind.FILE_AT), "#58", "#9", "deadbeef", run)
        ),
        forge,
        RUNS.__contains__,
        registered,
        T0,
    )
    assert mixed.verdict.verdict is PrecheckOutcome.LAUNCH and mixed.verdict.instances_found == ("#58",)
    assert mixed.verdict.reason == (
        "1 of 4 named issue/file_at instance(s) exist (missing #9: the ticket itself; not a commit sha;"
        " deadbeef: not #N; no such commit; " + run + ": not #N; not a commit sha)"
    )


def test_no_proposal_or_none_named_is_needs_labels(
    forge: LocalForge, registered: dict[str, tuple[str, ...]]
) -> None:
    bare = precheck(_ticket(9, "Seen again tonight."), forge, RUNS.__contains__, registered, T0)
    assert (bare.verdict.verdict, bare.verdict.proposal, bare.verdict.reason) == (
        PrecheckOutcome.NEEDS_LABELS,
        None,
        "no proposal comment on the ticket",
    )
    assert bare.request is not None and bare.request.proposal is None
    empty = precheck(
        _ticket(9, _proposal("m", (CorpusKind.JSONL,))), forge, RUNS.__contains__, registered, T0
    )
    assert empty.verdict.reason == "the proposal names no instance"
    # the latest proposal counts: a later one that names a real run launches
    later = _ticket(
        9, _proposal("m", (CorpusKind.JSONL,)), "a remark", _proposal("m", (CorpusKind.JSONL,), *RUNS)
    )
    assert precheck(later, forge, RUNS.__contains__, registered, T0).verdict.proposal == 102


def test_runs_are_found_in_the_log_or_under_a_root(tmp_path: Path) -> None:
    store = MemoryEventStore()
    shutil.copytree(EXAMPLES / "runs" / sorted(RUNS)[0], tmp_path / "runs" / "on-disk")
    index = RunIndex(store, [tmp_path])
    assert index("on-disk") and not index("elsewhere") and not index("../runs/on-disk")


def test_a_precheck_appends_once_per_answer(
    forge: LocalForge, registered: dict[str, tuple[str, ...]]
) -> None:
    store = MemoryEventStore()
    ticket = forge.ticket(44)
    first = precheck(ticket, forge, RUNS.__contains__, registered, T0)
    events = new_events(first, store.read_stream(ticket_stream(44)))
    assert [type(e).__name__ for e in events] == ["ProposalPosted", "PrecheckCompleted", "LabelRequested"]
    store.commit(
        [StreamWrite(ticket_stream(44), events)], Metadata(producer="prechecker.precheck", message_id="m-1")
    )
    again = precheck(ticket, forge, RUNS.__contains__, registered, datetime(2026, 10, 6, tzinfo=UTC))
    assert new_events(again, store.read_stream(ticket_stream(44))) == []
    # the corpus changed: one of the named runs is recorded now, so the same proposal launches
    named = first.verdict.instances_named[0]
    changed = precheck(ticket, forge, {*RUNS, named}.__contains__, registered, T0)
    assert [type(e).__name__ for e in new_events(changed, store.read_stream(ticket_stream(44)))] == [
        "PrecheckCompleted"
    ]
    # a new proposal comment is a new proposal
    newer = replace(
        ticket,
        comments=(
            *ticket.comments,
            *_ticket(44, _proposal("self-match", (CorpusKind.JSONL,), *RUNS)).comments,
        ),
    )
    kinds = [
        type(e).__name__
        for e in new_events(
            precheck(newer, forge, RUNS.__contains__, registered, T0), store.read_stream(ticket_stream(44))
        )
    ]
    assert kinds == ["ProposalPosted", "PrecheckCompleted"]


def test_needs_labels_asks_the_labeler(forge: LocalForge, registered: dict[str, tuple[str, ...]]) -> None:
    cause = PrecheckTicket(message_id="precheck-44-aa", correlation_id="sweep-1", ticket=44)
    result = precheck(forge.ticket(44), forge, RUNS.__contains__, registered, T0)
    message = label_message(result, cause)
    assert isinstance(message, LabelTicket) and message.TASK == "labeler.label"
    assert (message.ticket, message.request, message.causation_id, message.correlation_id) == (
        44,
        result.request,
        "precheck-44-aa",
        "sweep-1",
    )
    later = precheck(forge.ticket(44), forge, RUNS.__contains__, registered, T0)
    assert label_message(later, cause) == message  # the same request, the same message id
    assert label_message(precheck(forge.ticket(38), forge, RUNS.__contains__, registered, T0), cause) is None


def test_the_public_surface_is_pinned() -> None:
    from ouroboros_gates.workers import prechecker

    assert prechecker.__all__ == [
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

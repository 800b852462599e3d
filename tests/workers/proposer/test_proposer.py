"""The proposer against a scripted model server on 127.0.0.1: one call per batch with a byte-identical
prefix (so the second call reads the cache), cost rows, valid comments the pre-check reads, refusals with
why, posting once; and the census on the example proposals."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ouroboros_gates.forge import LocalForge
from ouroboros_gates.llm import ChatClient, Endpoint, MeteredClient, load_manifest
from ouroboros_gates.miners import discover
from ouroboros_gates.schemas import Proposal
from ouroboros_gates.workers.prechecker import latest_proposal, parse_proposal, precheck, registered_kinds
from ouroboros_gates.workers.proposer import census_row, count, post, propose, shared_prefix

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
RUNS = sorted(p.name for p in (EXAMPLES / "runs").iterdir())
T0 = datetime(2026, 10, 5, 9, 0, tzinfo=UTC)


def _answer(ticket: int, instances: list[str], miner: str = "sleep-poll", **extra: Any) -> dict[str, Any]:
    return {
        "ticket": ticket,
        "miner": miner,
        "corpus": ["jsonl"],
        "predicate": "a run polls with `sleep`",
        "facts": ['poll(R, L) :- line L of run R runs "sleep 30; gh run view"'],
        "rules": "sleep_poll(R) :- poll(R, _).",
        "instances": instances,
        "labels": [{"instance": i, "sign": "+"} for i in instances],
        **extra,
    }


@pytest.fixture
def forge(tmp_path: Path) -> LocalForge:
    return LocalForge.from_examples(EXAMPLES, tmp_path / "cache", writes_dir=tmp_path / "writes")


def _client(server: Any) -> MeteredClient:
    return MeteredClient(ChatClient(Endpoint("openai", f"{server.url}/v1", "local")), load_manifest("local"))


def _clock() -> Any:
    ticks = itertools.count()
    return lambda: T0 + timedelta(seconds=next(ticks))


def test_one_call_per_batch_with_a_shared_prefix_and_a_cost_row_each(
    model_server: Any, forge: LocalForge
) -> None:
    tickets = [forge.ticket(n) for n in (38, 41, 44)]
    model_server.script(
        [
            {
                "contains": "Ticket #38",
                "content": {
                    "proposals": [
                        _answer(38, RUNS[:2], miner="draft-pr-late"),
                        _answer(41, [RUNS[5]], labels=[]),
                    ]
                },
            },
            {
                "contains": "Ticket #44",
                "content": {"proposals": [_answer(44, [RUNS[3]], miner="self-match")]},
            },
        ]
    )
    prefix = shared_prefix(registered_kinds())
    batches = list(
        propose(
            tickets,
            _client(model_server),
            prefix,
            family="local",
            clock=_clock(),
            load=lambda: 0.5,
            batch_size=2,
        )
    )
    calls = model_server.calls("/v1/chat/completions")
    assert len(calls) == len(batches) == 2
    systems = [c["body"]["messages"][0]["content"] for c in calls]
    assert systems[0] == systems[1] == prefix and "Ticket #" not in prefix
    assert (
        "Ticket #38" in calls[0]["body"]["messages"][1]["content"]
        and "#44" not in calls[0]["body"]["messages"][1]["content"]
    )
    first, second = (b.call for b in batches)
    assert (first.tickets, first.artifacts, second.tickets, second.artifacts) == ((38, 41), 2, (44,), 1)
    assert (
        first.cache_read_tokens == 0 and second.cache_read_tokens > 0
    )  # the prefix hit the provider's cache
    assert (
        first.input_tokens > 0 and first.output_tokens > 0 and first.load == 0.5 and first.family == "local"
    )
    assert first.cost_usd == 0.0 and not first.cached  # a local model's manifest prices it at $0
    drafts = [d for b in batches for d in b.drafts]
    for item in drafts:
        parsed = parse_proposal(item.body, ticket=item.ticket, comment_id=1, posted_at=T0)
        assert parsed.miner == item.miner and item.body.startswith("Proposal from `ouro propose` (local)")
    assert [d.ticket for d in drafts] == [38, 41, 44]


def test_answers_that_make_no_proposal_are_refused_with_why(model_server: Any, forge: LocalForge) -> None:
    bad_label = _answer(41, [RUNS[0]], labels=[{"instance": "elsewhere", "sign": "+"}])
    model_server.script(
        [
            {
                "call": 0,
                "content": {"proposals": [bad_label, _answer(99, []), _answer(38, [], miner="no spaces")]},
            },
            {"call": 1, "malformed": True},
        ]
    )
    tickets = [forge.ticket(n) for n in (38, 41, 44)]
    batches = list(
        propose(
            tickets,
            _client(model_server),
            "prefix",
            family="local",
            clock=_clock(),
            load=lambda: None,
            batch_size=3,
        )
    )
    assert batches[0].drafts == ()
    assert batches[0].refused == (
        "#41: labels name 'elsewhere', which is not one of its instances",
        "#99: not a ticket of this batch",
        "#38: miner: String should match pattern '^[A-Za-z0-9_][A-Za-z0-9_.-]*$'",
        "#44: no proposal in the reply",
    )
    again = list(
        propose(
            tickets,
            _client(model_server),
            "prefix",
            family="local",
            clock=_clock(),
            load=lambda: None,
            batch_size=3,
        )
    )
    assert again[0].drafts == () and again[0].error.startswith("the reply is not a proposal list")
    assert (
        again[0].call.input_tokens > 0 and again[0].call.artifacts == 0
    )  # a bad answer still has its cost row


def test_a_posted_proposal_is_what_the_precheck_reads_and_is_posted_once(
    model_server: Any, forge: LocalForge
) -> None:
    model_server.script([{"content": {"proposals": [_answer(44, [RUNS[7]], miner="self-match")]}}])
    (batch,) = propose(
        [forge.ticket(44)], _client(model_server), "p", family="local", clock=_clock(), load=lambda: None
    )
    posted = post(forge, batch.drafts[0])
    assert isinstance(posted, Proposal) and posted.instances == (RUNS[7],)
    ticket = forge.ticket(44)
    comment = latest_proposal(ticket)
    assert comment is not None and comment.id == posted.comment_id
    verdict = precheck(ticket, forge, set(RUNS).__contains__, registered_kinds(), T0).verdict
    assert (verdict.proposal, verdict.verdict.value, verdict.instances_found) == (
        posted.comment_id,
        "launch",
        (RUNS[7],),
    )
    assert post(forge, batch.drafts[0]) is None  # the same answer again is not a second comment
    assert len(forge.ticket(44).comments) == len(ticket.comments)


def test_the_census_counts_proposals_an_existing_extractor_reaches(forge: LocalForge) -> None:
    miners, _ = discover()
    runs = {name: EXAMPLES / "runs" / name / "events.jsonl" for name in RUNS}
    rows = []
    for number in (38, 41, 44, 47, 50, 53):
        ticket = forge.ticket(number)
        comment = latest_proposal(ticket)
        assert comment is not None
        proposal = parse_proposal(
            comment.body, ticket=number, comment_id=comment.id, posted_at=comment.created_at
        )
        rows.append(census_row(proposal, miners, runs.get))
    by = {row.ticket: row for row in rows}
    assert (by[38].extractor, by[38].tp, by[38].instances) == ("draft-pr-late", 2, 4)  # both + runs flagged
    assert (by[41].extractor, by[41].tp) == ("sleep-poll", 1)
    assert (by[47].extractor, by[47].why) == ("draft-pr-late", "no named instance is a run it can read")
    assert count(rows) == 2


def test_the_public_surface_is_pinned() -> None:
    from ouroboros_gates.workers import proposer

    assert proposer.__all__ == [
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

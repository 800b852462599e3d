"""The proposal comment format: the examples parse, render and parse round-trip, and every fault names its
comment line and field."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ouroboros_gates.schemas import CorpusKind, Proposal
from ouroboros_gates.workers.prechecker import (
    FENCE,
    ProposalFormatError,
    find_block,
    has_block,
    parse_proposal,
    render_proposal,
)

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "forge" / "tickets"
T0 = datetime(2026, 10, 3, 9, 0, tzinfo=UTC)


def _parse(body: str) -> Proposal:
    return parse_proposal(body, ticket=38, comment_id=7, posted_at=T0)


def _latest(ticket: int) -> str:
    comments = json.loads((EXAMPLES / f"{ticket}.json").read_text())["comments"]
    return str([c for c in comments if has_block(c["body"])][-1]["body"])


def _fault(body: str) -> ProposalFormatError:
    with pytest.raises(ProposalFormatError) as caught:
        _parse(body)
    return caught.value


def test_the_example_proposals_parse() -> None:
    proposal = _parse(_latest(38))
    assert proposal.miner == "draft-pr-late" and proposal.corpus == (CorpusKind.JSONL,)
    assert proposal.instances[0] == "c7e2a9f4-3b18-4d6e-8f50-6a2d9b1e4c37" and len(proposal.instances) == 4
    assert proposal.labels[0] == "c7e2a9f4-3b18-4d6e-8f50-6a2d9b1e4c37\t+"
    assert proposal.facts[1].startswith('draft_pr(R, T) :- the tool_result of a Bash "gh pr create --draft"')
    assert _parse(_latest(53)).instances == ("374fdc4", "31eb1b3")
    assert _parse(_latest(50)).corpus == (CorpusKind.PULL_REQUEST,)


def test_the_malformed_example_names_its_line_and_field() -> None:
    fault = _fault(_latest(48))
    body = _latest(48).splitlines()
    assert fault.field == "instances" and body[fault.line - 1].startswith("instances = [e1a6d3b8")
    assert str(fault) == f"line {fault.line}, field instances: malformed TOML at column 14: Invalid value"


@pytest.mark.parametrize(
    ("block", "line", "field", "message"),
    [
        (
            'miner = "m"\ncorpus = ["jsonl"]\ninstances = []\npredicate = "p"\nowner = "x"',
            8,
            "owner",
            "unknown field",
        ),
        ('miner = "m"\ncorpus = ["jsonl"]\ninstances = []', 4, "predicate", "missing (required"),
        (
            'miner = 3\ncorpus = ["jsonl"]\ninstances = []\npredicate = "p"',
            4,
            "miner",
            "expected a string, got an int",
        ),
        (
            'miner = "m"\ncorpus = ["logs"]\ninstances = []\npredicate = "p"',
            5,
            "corpus[0]",
            "unknown kind 'logs'",
        ),
        ('miner = "m"\ncorpus = []\ninstances = []\npredicate = "p"', 5, "corpus", "no corpus kind"),
        (
            'miner = "m"\ncorpus = ["jsonl"]\ninstances = ["a", 2]\npredicate = "p"',
            6,
            "instances[1]",
            "got an int",
        ),
        (
            'miner = "m"\ncorpus = ["jsonl"]\ninstances = ["a", "a"]\npredicate = "p"',
            6,
            "instances",
            "listed twice",
        ),
        (
            'miner = "m"\ncorpus = ["jsonl"]\ninstances = ["a"]\npredicate = "p"\nlabels = [["b", "+"]]',
            8,
            "labels[0]",
            "'b' is not one of the instances",
        ),
        (
            'miner = "m"\ncorpus = ["jsonl"]\ninstances = ["a"]\npredicate = "p"\nlabels = [["a", "?"]]',
            8,
            "labels[0]",
            "sign '?' is not",
        ),
        (
            'miner = "m m"\ncorpus = ["jsonl"]\ninstances = ["a"]\npredicate = "p"',
            4,
            "miner",
            "String should match",
        ),
        (
            'miner = "m"\ncorpus = ["jsonl"]\ninstances = [\n  "a",\n  b,\n]\npredicate = "p"',
            8,
            "instances",
            "malformed TOML",
        ),
    ],
)
def test_every_fault_names_the_comment_line_and_the_field(
    block: str, line: int, field: str, message: str
) -> None:
    fault = _fault(f"Proposal.\n\n```{FENCE}\n{block}\n```\n")
    assert (fault.line, fault.field) == (line, field)
    assert message in fault.message
    assert str(fault).startswith(f"line {line}, field {field}: ")


def test_a_block_must_be_closed_and_single() -> None:
    assert find_block("no block here") is None
    unclosed = _fault(f'x\n```{FENCE}\nminer = "m"\n')
    assert (unclosed.line, unclosed.field) == (2, "") and "never closed" in str(unclosed)
    twice = _fault(f"```{FENCE}\n```\n\n```{FENCE}\n```\n")
    assert twice.line == 4 and "a second" in str(twice)
    assert "no ```ouroboros-proposal block" in str(_fault("just words"))


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_instances = st.lists(
    st.from_regex(r"[A-Za-z0-9#][A-Za-z0-9_.:#-]{0,20}", fullmatch=True), max_size=5, unique=True
)


@given(
    miner=st.from_regex(r"[a-z][a-z0-9_.-]{0,20}", fullmatch=True),
    corpus=st.lists(st.sampled_from(list(CorpusKind)), min_size=1, max_size=4, unique=True),
    instances=_instances,
    predicate=_text,
    facts=st.lists(_text, max_size=3),
    rules=_text,
    signs=st.lists(st.sampled_from(["+", "-"]), max_size=5),
    note=_text,
)
def test_render_then_parse_gives_the_proposal_back(
    miner: str,
    corpus: list[CorpusKind],
    instances: list[str],
    predicate: str,
    facts: list[str],
    rules: str,
    signs: list[str],
    note: str,
) -> None:
    labels = tuple(f"{instance}\t{sign}" for instance, sign in zip(instances, signs, strict=False))
    proposal = Proposal(
        ticket=5,
        comment_id=9,
        miner=miner,
        corpus=tuple(corpus),
        instances=tuple(instances),
        predicate=predicate,
        facts=tuple(facts),
        rules=rules,
        labels=labels,
        posted_at=T0,
    )
    body = render_proposal(proposal, note=note if "```" not in note else "")
    assert parse_proposal(body, ticket=5, comment_id=9, posted_at=T0) == proposal

"""Fuzzing what the loop reads from outside: proposal comments, git's pre-push stdin and model replies.
Whatever comes in, the only error is the parser's own, naming where (comment line and field, stdin line,
schema location); a worker never crashes on it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ouroboros_gates.llm import ReplyParseError, parse_json_reply
from ouroboros_gates.ops.pushes import parse_pre_push
from ouroboros_gates.schemas import Proposal
from ouroboros_gates.schemas.errors import OuroError
from ouroboros_gates.workers.prechecker import ProposalFormatError, parse_proposal, render_proposal

QUICK = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WHEN = datetime(2026, 10, 2, 18, 4, 45, tzinfo=UTC)
GOOD = Proposal(
    ticket=53,
    comment_id=3386655091,
    miner="self-merge",
    corpus=("jsonl",),
    instances=("374fdc4", "31eb1b3"),
    predicate="a run merged its own pull request",
    facts=("merged(R) :- ...",),
    rules="flag(R) :- merged(R).",
    labels=("374fdc4\t+",),
    posted_at=WHEN,
)
SHA = st.text(alphabet="0123456789abcdef", min_size=40, max_size=40)


COMMENT = "Proposal below.\n\n" + render_proposal(GOOD) + "\nThanks.\n"
_TOML_BITS = st.sampled_from(
    [
        '"',
        "[",
        "]",
        "=",
        "\n",
        "```",
        "#",
        "miner",
        'labels = [["x", "?"]]',
        "\\",
        "corpus = 3",
        "instances = []",
        "unknown = 1",
        "ouroboros-proposal",
        "\t",
        ",",
    ]
)


@QUICK
@given(at=st.floats(0, 1), junk=st.lists(_TOML_BITS | st.text(max_size=4), max_size=8).map("".join))
def test_a_damaged_proposal_comment_is_one_error_naming_its_line(at: float, junk: str) -> None:
    cut = int(len(COMMENT) * at)
    body = COMMENT[:cut] + junk + COMMENT[cut:]
    try:
        parse_proposal(body, ticket=53, comment_id=1, posted_at=WHEN)
    except ProposalFormatError as exc:
        assert 1 <= exc.line <= body.count("\n") + 1 and exc.message, str(exc)
        assert str(exc).startswith(f"line {exc.line}")


def test_the_sample_comment_reads_back() -> None:
    assert parse_proposal(COMMENT, ticket=53, comment_id=3386655091, posted_at=WHEN) == GOOD


@QUICK
@given(body=st.text(max_size=300))
def test_any_comment_is_a_proposal_or_one_located_error(body: str) -> None:
    try:
        parse_proposal(body, ticket=53, comment_id=1, posted_at=WHEN)
    except ProposalFormatError as exc:
        assert exc.line >= 1 and exc.message


_PUSH = st.builds(
    lambda a, b, c, d: f"{a} {b} {c} {d}",
    st.sampled_from(["refs/heads/main", "HEAD", "refs/x"]),
    SHA,
    st.sampled_from(["refs/heads/main", "refs/heads/f"]),
    SHA,
)


@QUICK
@given(
    lines=st.lists(_PUSH | st.text(max_size=60).filter(lambda t: "\n" not in t and "\r" not in t), max_size=8)
)
def test_pre_push_stdin_is_read_or_refused_at_its_first_bad_line(lines: list[str]) -> None:
    try:
        pushes = parse_pre_push(lines, "repo", str(Path.cwd()))
    except OuroError as exc:
        number = int(str(exc).split(":")[1])
        assert str(exc).startswith(f"stdin:{number}: ")
        assert parse_pre_push(lines[: number - 1], "repo", None) is not None  # every line before it reads
        with pytest.raises(OuroError):
            parse_pre_push([lines[number - 1]], "repo", None)  # the named line is the bad one
        return
    assert len(pushes) <= len(lines)


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"label": {"enum": ["yes", "no", "unsure"]}, "confidence": {"type": "number"}},
    "required": ["label"],
}
_REPLY_BITS = st.sampled_from(
    [
        '{"label": "yes"}',
        '{"label": "maybe"}',
        "```json\n",
        "```",
        "{",
        "}",
        "[]",
        "null",
        '"confidence": "high"',
        "NaN",
        "\n",
        " ",
        "label",
    ]
)


@QUICK
@given(reply=st.lists(_REPLY_BITS | st.text(max_size=6), max_size=8).map("".join))
def test_any_model_reply_is_a_valid_answer_or_one_parse_error(reply: str) -> None:
    try:
        answer = parse_json_reply(reply, SCHEMA)
    except ReplyParseError as exc:
        assert str(exc) and exc.text == reply
        return
    assert isinstance(answer, dict) and answer["label"] in ("yes", "no", "unsure")

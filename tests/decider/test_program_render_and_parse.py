"""The program: a byte-identical shared prefix, no label or identity in a prompt, missing said in words,
answers parsed with the cited-line check, and the canonical JSON (program id) round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _decider_support import item

from ouroboros_gates.decider.excerpt import make_excerpt
from ouroboros_gates.decider.features import EXCLUDED_FIELDS
from ouroboros_gates.decider.program import (
    Answer,
    AnswerError,
    CandidateView,
    Demo,
    OperatingPoint,
    Program,
    ProgramError,
    Shown,
    parse_answer,
    render_messages,
    render_signals,
)
from ouroboros_gates.schemas import InstrumentState, State

PROGRAM = Program(
    kind="llm-program",
    k=3,
    demos=(
        Demo(
            "e1", "   1  run(x)", "qr.enabled_hits: 1", (), "command_injection", "vulnerable", "Line 1.", (1,)
        ),
    ),
    operating_points={"*": OperatingPoint(advisory=0.4, block=0.9, block_offered=True)},
)


def view(function: str) -> CandidateView:
    a = item(function)
    return CandidateView(
        make_excerpt(a.code, a.start_line, "python"),
        render_signals(a.record.x, a.record.instruments),
        a.roles,
        "sql_injection",
    )


def test_the_shared_prefix_is_byte_identical_across_candidates() -> None:
    shown = [Shown("x1", "   5  exec(y)", "qr.enabled_hits: 2", (), "command_injection", 1)]
    a = render_messages(PROGRAM, view("search"), shown)
    b = render_messages(PROGRAM, view("lookup"), [])
    assert a[0] == b[0] and a[0]["role"] == "system"
    assert a[1] != b[1] and "label: vulnerable" in a[1]["content"]
    assert "json" in a[0]["content"].lower()  # the answer contract is part of the prefix


def test_a_prompt_holds_no_identity_and_no_label_field() -> None:
    messages = render_messages(PROGRAM, view("search"), [])
    text = "\n".join(m["content"] for m in messages)
    assert "acme" not in text and "app/db.py" not in text and "b" * 40 not in text
    for name in EXCLUDED_FIELDS:
        assert f"\n{name}:" not in text, name


def test_signals_of_an_instrument_that_did_not_run_are_said_in_words() -> None:
    x = {"qr.enabled_hits": 0, "bandit.issues": None, "delta.novelty": None}
    states = {
        "qr": InstrumentState(state=State.RAN),
        "bandit": InstrumentState(state=State.FAILED),
        "delta": InstrumentState(state=State.NOT_APPLICABLE),
    }
    assert render_signals(x, states).splitlines() == [
        "bandit: failed",
        "delta: not applicable",
        "qr.enabled_hits: 0",
    ]
    assert render_signals({"facts.callers": None}, {}) == "facts: no coverage"


EXCERPT = make_excerpt("a = 1\nb = 2\nc = 3", 10, "python")


def test_a_valid_answer_parses_and_lines_named_in_the_rationale_count() -> None:
    got = parse_answer(
        {
            "verdict": "vulnerable",
            "family": "sql_injection",
            "confidence": 0.8,
            "rationale": "Line 11 builds SQL; see lines 10-12.",
            "cited_lines": [],
        },
        EXCERPT,
    )
    assert got == Answer(
        "vulnerable", "sql_injection", 0.8, "Line 11 builds SQL; see lines 10-12.", (10, 11, 12)
    )
    assert got.p == 0.8
    assert parse_answer(
        json.dumps(
            {"verdict": "not_vulnerable", "confidence": 0.9, "rationale": "safe", "cited_lines": [12]}
        ),
        EXCERPT,
    ).p == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ('{"verdict": "vulnerable", "confidence": 0.9, "rationale": "line 3 reads', "not JSON"),
        ({"verdict": "maybe", "confidence": 0.5, "rationale": "r", "cited_lines": [10]}, "verdict"),
        ({"verdict": "vulnerable", "confidence": 1.5, "rationale": "r", "cited_lines": [10]}, "confidence"),
        (
            {"verdict": "vulnerable", "confidence": 0.5, "rationale": "line 99", "cited_lines": [99]},
            "cites no line",
        ),
        ({"verdict": "vulnerable", "confidence": 0.5, "rationale": "", "cited_lines": [10]}, "no rationale"),
    ],
)
def test_bad_answers_are_refused_with_the_reason(reply: object, why: str) -> None:
    with pytest.raises(AnswerError, match=why):
        parse_answer(reply, EXCERPT)  # type: ignore[arg-type]


def test_program_json_round_trips_to_the_same_id(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(PROGRAM.to_json())
    assert Program.load(path).program_id == PROGRAM.program_id
    assert Program(kind="llm-program", k=1).program_id != PROGRAM.program_id
    path.write_text(json.dumps({"kind": "llm-program", "k": 2}))
    with pytest.raises(ProgramError, match="k=2"):
        Program.load(path)
    with pytest.raises(ProgramError, match=r"missing\.json"):
        Program.load(tmp_path / "missing.json")


def test_packaged_programs_load() -> None:
    from ouroboros_gates.decider.assemble import packaged_program

    vote, llm = packaged_program("memory-vote"), packaged_program("llm-program")
    assert vote is not None and vote.kind == "memory-vote" and vote.point("xss") is not None
    assert llm is not None and llm.kind == "llm-program" and not llm.point("xss").block_offered  # type: ignore[union-attr]

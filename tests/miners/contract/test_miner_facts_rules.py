"""Facts between their forms, fact lines for `ouro datalog run`, and the rules contract's errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ouroboros_gates.miners import RulesError, check_rules, run_rules
from ouroboros_gates.miners.datalog import Value
from ouroboros_gates.miners.facts import (
    FactLineProblem,
    ProofJson,
    compact_json,
    derived_line,
    engine_value,
    input_fact,
    proof_facts,
    proof_json,
    read_fact_lines,
    to_arg,
)
from ouroboros_gates.schemas import Fact, Finding, Number, Scope, Severity, Span, Text


def test_numbers_are_one_type() -> None:
    assert engine_value(Number(number=1259.0)) == 1259 and isinstance(
        engine_value(Number(number=1259.0)), int
    )
    assert engine_value(Number(number=2.5)) == 2.5
    assert to_arg(468) == Number(number=468.0) and to_arg("r") == Text(text="r")


def test_compact_json_is_the_seeds_wire_form() -> None:
    fact = Fact(predicate="score", args=(Text(text="r"), Number(number=1259.0)), span=Span(file="f", line=4))
    finding = Finding(
        miner="draft-pr-late",
        rule="invisible",
        subject=(Text(text="r"),),
        severity=Severity.S3,
        proof=(fact,),
        scope=Scope.GENERIC,
    )
    line = compact_json(finding)
    assert line == (
        '{"miner":"draft-pr-late","rule":"invisible","subject":[{"text":"r"}],"severity":"SEVERITY_S3",'
        '"proof":[{"predicate":"score","args":[{"text":"r"},{"number":1259}],"span":{"file":"f","line":4}}],'
        '"scope":"generic"}'
    )
    assert Finding.model_validate_json(line) == finding


def test_fact_lines_report_bad_lines_and_read_on(tmp_path: Path) -> None:
    path = tmp_path / "facts.jsonl"
    path.write_text(
        '{"predicate":"gated","args":["r1"]}\n'
        "{not json\n"
        "\n"
        '{"predicate":"score","args":[{"text":"r1"},{"number":900}],"span":{"file":"x.jsonl","line":7}}\n'
        '{"predicate":"Bad","args":[]}\n'
        '{"predicate":"p","args":[true]}\n'
        '{"predicate":"p","args":[1],"extra":1}\n'
        '{"predicate":"knee","args":[468]}\n'
    )
    read = list(read_fact_lines(path))
    problems = [str(p) for p in read if isinstance(p, FactLineProblem)]
    facts = [f for f in read if isinstance(f, Fact)]
    assert [f.predicate for f in facts] == ["gated", "score", "knee"]
    assert facts[0].span == Span(file=str(path), line=1) and facts[1].span == Span(file="x.jsonl", line=7)
    assert problems[0].startswith(f"{path}:2: not valid JSON")
    assert [p.split(":")[1] for p in problems] == ["2", "5", "6", "7"]


def test_proofs_have_their_leaves_and_a_flat_tree() -> None:
    rules = check_rules(
        "/* predicate */\ninvisible(R) :- gated(R), score(R, S), knee(K), gt(S, K).\n", "r.dl"
    )
    facts = [
        input_fact(Fact(predicate="gated", args=(Text(text="r"),), span=Span(file="e", line=1))),
        input_fact(
            Fact(predicate="score", args=(Text(text="r"), Number(number=1259)), span=Span(file="e", line=4))
        ),
    ]
    model = run_rules(rules, facts, knee=468)
    proof = model.proof("invisible", ("r",))
    leaves = proof_facts(proof)
    assert [leaf.predicate for leaf in leaves] == ["gated", "score", "knee"]
    assert leaves[2].span is None  # the knee is a constant, given, not read
    tree = proof_json(proof)
    assert tree[0]["rule"].startswith("invisible(R) :-") and tree[0]["at"] == "r.dl:2"
    assert tree[0]["children"] == [1, 2, 3] and tree[0]["conditions"] == ["gt(1259, 468)"]
    assert tree[1] == {"atom": 'gated("r")', "span": {"file": "e", "line": 1}}


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("/* p */\np(X) :- q(X), !r(Y).\n", "r.dl:2:1", "negation before its variables are bound"),
        ("/* p */\n  p(X, Z) :- q(X).\n", "r.dl:2:3", "unbound variable Z in head"),
        ("/* p */\np(X) :- q(X), !p(X).\n", "r.dl:2:1", "recursion through negation"),
        ("/* p */\np(X :- q(X).\n", "r.dl:2:5", "expected"),
        ("p(X) :- q(X).\n", "r.dl:1:1", "rules must open with a /* predicate */ block comment"),
    ],
)
def test_rules_errors_are_file_line_col(text: str, where: str, message: str) -> None:
    with pytest.raises(RulesError) as caught:
        check_rules(text, "r.dl")
    assert str(caught.value).startswith(f"{where}: ") and message in str(caught.value)


def test_without_a_knee_the_relation_is_empty() -> None:
    rules = check_rules("/* p */ v(R) :- score(R, S), knee(K), gt(S, K).", "r.dl")
    facts = [("score", ("r", 10), None)]
    assert run_rules(rules, facts).facts("v") == set()
    assert run_rules(rules, facts, knee=5).facts("v") == {("r",)}


VALUES = st.one_of(
    st.text(max_size=12),
    st.sampled_from(['say "hi"\n\tthere\\', "naïve ✓", "\x00\x1f\x7f\u2028", "\ud800 alone"]),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e-05, 0.00001234, 1e16, 2.0**53, 1e22, -0.0, 5e-324]),
)


@given(st.lists(VALUES, max_size=5))
def test_a_derived_line_is_the_bytes_compact_json_writes(args: list[Value]) -> None:
    leaf = {"atom": "p(1)", "span": {"file": "f.jsonl", "line": 3}}
    node = {
        "atom": 'q("ü")',
        "rule": "q(X) :- p(X).",
        "at": "r.dl:2",
        "children": [0],
        "conditions": ["gt(2.5, 1)"],
    }
    proof: list[dict[str, Any]] = [leaf, node]
    row = {
        "predicate": "p",
        "args": [to_arg(value).model_dump(mode="json") for value in args],
        "proof": proof,
    }
    written = derived_line("p", tuple(args), proof)
    assert written == (compact_json(row) + "\n").encode("utf-8", "backslashreplace")
    assert json.loads(written) == json.loads(compact_json(row))


def test_proofs_written_by_one_formatter_are_each_their_own() -> None:
    rules = check_rules("/* predicate */\nr(X) :- e(X).\ns(X) :- r(X), e(X).\n", "r.dl")
    facts = [
        input_fact(Fact(predicate="e", args=(Text(text=t),), span=Span(file="e", line=n)))
        for n, t in enumerate("ab", start=1)
    ]
    model = run_rules(rules, facts)
    proofs = [model.proof(p, (t,)) for p in ("s", "r") for t in "ab"] + [model.step("s", ("b",))]
    formatter = ProofJson()
    assert [formatter(proof) for proof in proofs] == [proof_json(proof) for proof in proofs]

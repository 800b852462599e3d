"""``ouro datalog run``'s JSON lines written from one template per rule: without proofs, the bytes
``derived_line`` writes for each fact; with proofs, each derived fact's last step (the rule, where it is
written, and its premises: the children of ``Model.step``, through the same bindings, factored rules
included) and each given fact's span."""

from __future__ import annotations

import io
import json

import pytest
from benchmark_support import load_benchmark
from hypothesis import given
from hypothesis import strategies as st

from ouroboros_gates.miners import OutputFormat, write_relation
from ouroboros_gates.miners.datalog import Model, ProofsNotKeptError, Value, check, evaluate, parse
from ouroboros_gates.miners.facts import arg_json, derived_line
from ouroboros_gates.miners.relations import Proofs

ANALYSES = load_benchmark("_analyses")

VALUES = st.one_of(
    st.text(),
    st.sampled_from(["%s", "100%", "%%d", "\ud800", '"', "\\", "\t\n", "ü"]),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e-05, 1e16, 2.0**53, -0.0, 5e-324]),
)

RULES = """\
q(X, Y) :- p(X, Y).
r(X, "100%s", Y) :- p(X, Y), !s(Y), ne(X, "%d").
t(X, Z) :- q(X, Y), q(Y, Z).
"""


def written(model: Model, predicate: str, proofs: Proofs) -> bytes:
    out = io.BytesIO()
    assert write_relation(model, predicate, out, OutputFormat.JSONL, proofs) == len(model.rows(predicate))
    return out.getvalue()


@given(st.lists(st.tuples(VALUES, VALUES), max_size=6))
def test_lines_without_proofs_are_the_bytes_derived_line_writes(pairs: list[tuple[Value, Value]]) -> None:
    model = evaluate(check(parse(RULES, "r.dl")), [("p", pair, None) for pair in pairs])
    for predicate in ("p", "q", "r", "t"):
        expected = b"".join(derived_line(predicate, row, None) for row in model.rows(predicate))
        assert written(model, predicate, "none") == expected


def _atoms(premises: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(p["predicate"], tuple(p["args"])) for p in premises]  # type: ignore[arg-type]


def assert_steps(model: Model, predicate: str) -> None:
    """Each line of ``predicate`` is its fact with ``Model.step``'s rule and premises, or its span."""
    lines = written(model, predicate, "step").split(b"\n")[:-1]  # a value may hold \x85 or \u2028
    assert len(lines) == len(model.rows(predicate))
    for line, row in zip(lines, model.rows(predicate), strict=True):
        found = json.loads(line)
        assert found["predicate"] == predicate and found["args"] == [arg_json(value) for value in row]
        step = model.step(predicate, row)
        if step.rule is None:
            span = step.span
            assert found["proof"] == {"span": {"file": span[0], "line": span[1]}}  # type: ignore[index]
            continue
        assert set(found["proof"]) == {"rule", "at", "premises"}
        assert (found["proof"]["rule"], found["proof"]["at"]) == (step.rule.index, str(step.rule.location))
        expected = [(c.atom.predicate, tuple(arg_json(v) for v in c.atom.args)) for c in step.children]
        assert _atoms(found["proof"]["premises"]) == expected


@given(st.lists(st.tuples(VALUES, VALUES), max_size=6))
def test_a_step_line_holds_the_rule_and_the_premises_model_step_finds(
    pairs: list[tuple[Value, Value]],
) -> None:
    facts = [("p", pair, ("p.jsonl", line)) for line, pair in enumerate(pairs, 1)]
    model = evaluate(check(parse(RULES, "r.dl")), facts)
    for predicate in ("p", "q", "r", "t"):
        assert_steps(model, predicate)


def test_the_points_to_lines_show_the_factored_rule_as_written() -> None:
    analysis = next(a for a in ANALYSES.ANALYSES if a.name == "points-to")
    facts = analysis.facts("small", 7)
    checked = check(parse(analysis.program, "points-to.dl"))
    model = evaluate(checked, [(p, args, ("input", line)) for line, (p, args) in enumerate(facts, 1)])
    assert_steps(model, "pointsTo")
    assert_steps(model, "heapAlloc")  # given: each line its span
    lines = [json.loads(line) for line in written(model, "pointsTo", "step").split(b"\n")[:-1]]
    loaded = [line for line in lines if line["proof"].get("rule") == 5]
    assert loaded and all(
        [p["predicate"] for p in line["proof"]["premises"]] == ["load", "pointsTo", "heapPointsTo"]
        for line in loaded
    )


def test_proofs_from_a_model_without_them_are_refused() -> None:
    model = evaluate(check(parse(RULES, "r.dl")), [("p", ("a", "b"), None)], proofs=False)
    with pytest.raises(ProofsNotKeptError, match="no proofs of q"):
        written(model, "q", "step")
    assert written(model, "q", "none") == b'{"predicate":"q","args":[{"text":"a"},{"text":"b"}]}\n'

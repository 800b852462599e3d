"""Proofs: one derivation per fact, rebuilt as a tree whose leaves carry the spans given with them."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from ouroboros_gates.miners.datalog import (
    Condition,
    GroundAtom,
    InputFact,
    Model,
    ProofNode,
    UnknownFactError,
    check,
    evaluate,
    parse,
)

TEMPLATE = """\
/* predicate
   invisible(R): run R stayed without a draft pull request for longer than the knee. */
invisible(R) :- gated(R), score(R, S), knee(K), gt(S, K).
"""


@dataclass(frozen=True)
class Span:
    """The caller's own span type: the engine treats it as an opaque object."""

    file: str
    line: int


def run(text: str, facts: list[InputFact], file: str = "t.dl") -> Model:
    return evaluate(check(parse(text, file)), facts)


def template_model() -> Model:
    facts: list[InputFact] = [
        ("gated", ("4e60",), Span("fixtures/4e60/events.jsonl", 1)),
        ("score", ("4e60", 1259), Span("fixtures/4e60/events.jsonl", 9)),
        ("score", ("4e31", 468), Span("fixtures/4e31/events.jsonl", 7)),
        ("knee", (468,), None),
    ]
    return run(TEMPLATE, facts, "rules.dl")


def test_a_verdict_proof_lists_the_rule_the_facts_with_their_spans_and_the_checked_comparison() -> None:
    proof = template_model().proof("invisible", ("4e60",))
    assert proof.atom == GroundAtom("invisible", ("4e60",)) == ("invisible", ("4e60",))
    assert proof.rule is not None and proof.rule.index == 0
    assert (proof.rule.location.file, proof.rule.location.line) == ("rules.dl", 3)
    assert str(proof.rule) == "invisible(R) :- gated(R), score(R, S), knee(K), gt(S, K)."
    assert proof.span is None
    assert [str(child.atom) for child in proof.children] == [
        'gated("4e60")',
        'score("4e60", 1259)',
        "knee(468)",
    ]
    assert [child.span for child in proof.children] == [
        Span("fixtures/4e60/events.jsonl", 1),
        Span("fixtures/4e60/events.jsonl", 9),
        None,
    ]
    assert proof.conditions == (Condition("gt", (1259, 468), negated=False),)
    assert [leaf.atom for leaf in proof.leaves()] == [child.atom for child in proof.children]
    assert all(leaf.rule is None and leaf.children == () for leaf in proof.leaves())


def test_a_given_fact_is_its_own_proof() -> None:
    proof = template_model().proof("score", ("4e31", 468))
    assert proof.rule is None and proof.children == () and proof.span == Span("fixtures/4e31/events.jsonl", 7)
    assert proof.leaves() == [proof]


def test_facts_written_in_the_program_have_file_and_line_as_their_span() -> None:
    model = run("reach(X) :- start(X).\n\nstart(1).\nstart(1).\n", [("start", (1,), Span("x", 1))], "r.dl")
    (leaf,) = model.proof("reach", (1,)).leaves()
    assert leaf.span == ("r.dl", 3)


def test_a_fact_given_twice_keeps_its_first_span() -> None:
    model = run("p(X) :- q(X).", [("q", (1,), Span("a", 1)), ("q", (1,), Span("b", 2)), ("q", (1.0,), None)])
    assert model.proof("q", (1,)).span == Span("a", 1)


def test_recursive_proofs_follow_the_first_derivation_down_to_the_edges() -> None:
    facts: list[InputFact] = [("edge", (n, n + 1), Span("g", n)) for n in range(5)]
    model = run("path(X, Y) :- edge(X, Y).\npath(X, Z) :- path(X, Y), edge(Y, Z).", facts)
    proof = model.proof("path", (0, 5))
    assert [leaf.atom.args for leaf in proof.leaves()] == [(n, n + 1) for n in range(5)]
    assert [leaf.span for leaf in proof.leaves()] == [Span("g", n) for n in range(5)]
    depth, node = 0, proof
    while node.children:
        node, depth = node.children[0], depth + 1
    assert depth == 5


def test_a_proof_thousands_of_steps_deep_is_built_without_recursion() -> None:
    length = 3000
    facts: list[InputFact] = [("edge", (n, n + 1), None) for n in range(length)]
    model = run("reach(0).\nreach(Y) :- reach(X), edge(X, Y).", facts)
    proof = model.proof("reach", (length,))
    assert len(proof.leaves()) == length + 1
    assert str(proof).count("\n") == 2 * length
    assert repr(proof) == f"ProofNode(reach({length}), rule=0)"


def test_negations_and_anonymous_variables_appear_in_the_proof() -> None:
    text = "lonely(X) :- node(X, _), !edge(X, _), ne(X, 0)."
    model = run(text, [("node", (1, "n"), None), ("edge", (2, 1), None)])
    proof = model.proof("lonely", (1,))
    assert [str(child.atom) for child in proof.children] == ['node(1, "n")']
    assert [str(condition) for condition in proof.conditions] == ["!edge(1, _)", "ne(1, 0)"]
    assert proof.conditions[0] == Condition("edge", (1, None), negated=True)


def test_a_shared_subproof_is_rendered_once() -> None:
    text = "both(X) :- p(X), q(X).\np(X) :- r(X).\nq(X) :- p(X)."
    proof = run(text, [("r", (1,), Span("r.txt", 4))]).proof("both", (1,))
    rendered = str(proof)
    assert rendered.splitlines() == [
        "both(1)  [rule 0 at t.dl:1: both(X) :- p(X), q(X).]",
        "  p(1)  [rule 1 at t.dl:2: p(X) :- r(X).]",
        "    r(1)  [fact at Span(file='r.txt', line=4)]",
        "  q(1)  [rule 2 at t.dl:3: q(X) :- p(X).]",
        "    p(1)  [shown above]",
    ]
    assert [leaf.atom for leaf in proof.leaves()] == [GroundAtom("r", (1,))]
    assert [str(node.atom) for node in proof.walk()] == ["both(1)", "p(1)", "r(1)", "q(1)"]


def test_every_fact_of_a_model_has_a_proof_and_others_do_not() -> None:
    model = template_model()
    for predicate in model.predicates():
        for args in model.facts(predicate):
            assert isinstance(model.proof(predicate, args), ProofNode)
    with pytest.raises(UnknownFactError, match=r'the model holds no fact invisible\("4e31"\)'):
        model.proof("invisible", ("4e31",))
    with pytest.raises(LookupError):
        model.proof("nothing", ())


def test_the_proof_uses_the_first_derivation_found() -> None:
    text = "ok(X) :- a(X).\nok(X) :- b(X)."
    model = run(text, [("a", (1,), None), ("b", (1,), None), ("b", (2,), None)])
    first = model.proof("ok", (1,)).rule
    assert first is not None and first.index == 0
    second = model.proof("ok", (2,)).rule
    assert second is not None and second.index == 1


def test_a_program_assembled_by_hand_proves_with_the_rules_it_holds() -> None:
    program = parse("a(X) :- e(X).\nb(X) :- e(X), !a(X).\nc(X) :- e(X).")
    mutant = replace(program, rules=(program.rules[1], program.rules[2]))
    proof = evaluate(check(mutant), [("e", (1,), None)]).proof("b", (1,))
    assert proof.rule is not None and proof.rule.index == 0 and str(proof.rule) == "b(X) :- e(X), !a(X)."


def test_a_step_is_the_proof_cut_below_the_root_and_each_derived_premise_continues_it() -> None:
    text = "path(X, Y) :- edge(X, Y).\npath(X, Z) :- path(X, Y), edge(Y, Z), !blocked(Z).\nblocked(9).\n"
    model = run(text, [("edge", (n, n + 1), Span("edges", n)) for n in range(4)])
    tree = model.proof("path", (0, 3))
    step = model.step("path", (0, 3))
    assert (step.atom, step.rule, step.conditions) == (tree.atom, tree.rule, tree.conditions)
    assert [child.atom for child in step.children] == [child.atom for child in tree.children]
    derived, given = step.children
    assert (
        derived.rule is not None
        and derived.rule.index == 1
        and not derived.expanded
        and derived.children == ()
    )
    assert given.rule is None and given.span == Span("edges", 2) and given.expanded
    assert str(step).splitlines()[1] == "  path(0, 2)  [rule 1, not expanded]"
    assert model.step("path", (0, 2)).children[0].atom == ("path", (0, 1))
    leaf = model.step("edge", (1, 2))
    assert (leaf.rule, leaf.span, leaf.children) == (None, Span("edges", 1), ())
    with pytest.raises(UnknownFactError):
        model.step("path", (3, 0))

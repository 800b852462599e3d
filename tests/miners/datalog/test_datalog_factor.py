"""Factored joins (``factor.py``): a recursive rule's join of two atoms on a variable nothing else reads is
kept as a hidden relation; the model is the same as clingo's or the naive evaluator's, the hidden relations
never show, and every proof shows the rules as written, with each body fact the written rule reads."""

from __future__ import annotations

import random

import pytest
from benchmark_support import load_benchmark
from datalog_clingo import clingo_model
from datalog_naive import naive_model, unify

from ouroboros_gates.miners.datalog import (
    Atom,
    Model,
    ProofsNotKeptError,
    check,
    evaluate,
    parse,
)
from ouroboros_gates.miners.datalog.factor import factor

ANALYSES = load_benchmark("_analyses")
CHAIN = """\
r(X, Y) :- e(X, Y).
r(X, W) :- e(X, Y), r(Y, Z), f(Z, V), g(V, W).
"""


def assert_proofs_as_written(model: Model, predicate: str, count: int) -> None:
    """``count`` facts of ``predicate`` (spread over the relation): each proof node's rule is a rule of the
    program, its head and body unify with the node's atom and children, and the children are in the model."""
    rows = sorted(model.facts(predicate))
    written = {str(rule) for rule in model.program.rules}
    for args in rows[:: max(1, len(rows) // count)]:
        for node in model.proof(predicate, args).walk():
            if node.rule is None:
                assert node.atom in model
                continue
            assert str(node.rule) in written
            binding = unify(node.rule.head.terms, node.atom.args, {})
            positives = [literal for literal in node.rule.body if isinstance(literal, Atom)]
            assert binding is not None and len(positives) == len(node.children)
            for literal, child in zip(positives, node.children, strict=True):
                assert child.atom in model and child.atom.predicate == literal.predicate
                binding = unify(literal.terms, child.atom.args, binding)
                assert binding is not None


def test_the_points_to_rules_join_load_and_store_away_and_prove_as_written() -> None:
    analysis = next(a for a in ANALYSES.ANALYSES if a.name == "points-to")
    checked = check(parse(analysis.program, "points-to.dl"))
    evaluation = factor(checked)
    assert len(evaluation.hidden) == 2
    hidden = [str(rule.rule) for rule in evaluation.rules[len(checked.rules) :]]
    assert hidden == [
        "~7(To, O) :- load(To, Base), pointsTo(Base, O).",
        "~8(From, O) :- store(Base, From), pointsTo(Base, O).",
    ]
    assert str(evaluation.rules[5].rule) == "pointsTo(To, P) :- ~7(To, O), heapPointsTo(O, P)."
    facts = analysis.facts("small", 7)
    model = evaluate(checked, [(p, args, ("input", line)) for line, (p, args) in enumerate(facts, 1)])
    expected = clingo_model(checked.program, facts)  # the naive evaluator would take minutes
    assert not any(p.startswith("~") for p in model.predicates())
    for predicate in ("pointsTo", "heapPointsTo"):
        assert model.facts(predicate) == expected[predicate]
        assert_proofs_as_written(model, predicate, 40)
    loaded = next(
        args
        for args in model.facts("pointsTo")
        if model.proof("pointsTo", args).rule == checked.program.rules[5]
    )
    children = model.proof("pointsTo", loaded).children
    assert [child.atom.predicate for child in children] == ["load", "pointsTo", "heapPointsTo"]
    step = model.step("pointsTo", loaded)  # the last step alone: the same premises, derived ones unexpanded
    assert [child.atom for child in step.children] == [child.atom for child in children]
    assert step.children[1].rule in checked.program.rules and not step.children[1].expanded


def test_a_chain_is_factored_twice_and_its_proof_keeps_all_four_atoms() -> None:
    rng = random.Random(5)
    nodes = range(12)
    facts = [(name, (rng.choice(nodes), rng.choice(nodes))) for name in ("e", "f", "g") for _ in range(30)]
    checked = check(parse(CHAIN, "chain.dl"))
    assert len(factor(checked).hidden) == 2  # Y, then V (or Z): the rule ends a join of two
    model = evaluate(checked, [(p, args, None) for p, args in facts])
    assert model.facts("r") == naive_model(checked.program, facts)["r"]
    long = [args for args in model.facts("r") if model.proof("r", args).rule == checked.program.rules[1]]
    assert long
    assert [c.atom.predicate for c in model.proof("r", long[0]).children] == ["e", "r", "f", "g"]
    assert_proofs_as_written(model, "r", 30)


def test_rules_outside_recursion_and_short_rules_are_evaluated_as_written() -> None:
    checked = check(
        parse("q(X) :- a(X, Y), b(Y, Z), c(Z).\np(X, Y) :- p(X, Z), e(Z, Y).\np(X, Y) :- e(X, Y).\n")
    )
    assert factor(checked).hidden == frozenset()


def test_a_model_without_proofs_has_the_same_facts_and_refuses_a_proof() -> None:
    analysis = next(a for a in ANALYSES.ANALYSES if a.name == "points-to")
    checked = check(parse(analysis.program, "points-to.dl"))
    facts = [(p, args, ("input", n)) for n, (p, args) in enumerate(analysis.facts("small", 3), 1)]
    with_proofs, without = evaluate(checked, facts), evaluate(checked, facts, proofs=False)
    assert without.facts("pointsTo") == with_proofs.facts("pointsTo") and not without.proofs
    args = next(iter(without.facts("heapPointsTo")))
    with pytest.raises(ProofsNotKeptError, match="evaluated without proofs"):
        without.proof("heapPointsTo", args)
    given = next(iter(without.facts("load")))
    assert without.proof("load", given).span[0] == "input"  # a given fact is its own proof still


def test_a_model_keeping_one_relation_s_derivations_steps_it_and_refuses_the_others() -> None:
    analysis = next(a for a in ANALYSES.ANALYSES if a.name == "points-to")
    checked = check(parse(analysis.program, "points-to.dl"))
    facts = [(p, args, ("input", n)) for n, (p, args) in enumerate(analysis.facts("small", 3), 1)]
    full, some = evaluate(checked, facts), evaluate(checked, facts, proofs=["pointsTo"])
    assert some.facts("pointsTo") == full.facts("pointsTo") and not some.proofs
    assert some.keeps("pointsTo") and not some.keeps("heapPointsTo")
    for args in sorted(some.facts("pointsTo"))[::50]:  # the factored rule's hidden premises kept too
        assert [c.atom for c in some.step("pointsTo", args).children] == [
            c.atom for c in full.step("pointsTo", args).children
        ]
    args = next(iter(some.facts("heapPointsTo")))
    with pytest.raises(ProofsNotKeptError, match="evaluated without proofs of heapPointsTo"):
        some.step("heapPointsTo", args)

"""The benchmark's real programs at their medium size: the engine derives exactly the facts clingo
does, and a proof of a derived fact rests on input facts with their spans (no time is measured)."""

from __future__ import annotations

from typing import Any

import pytest
from benchmark_support import load_benchmark
from datalog_clingo import clingo_model

from ouroboros_gates.miners.datalog import check, evaluate, parse

MODULE = load_benchmark("_analyses")


@pytest.mark.slow
@pytest.mark.parametrize("analysis", MODULE.ANALYSES, ids=lambda analysis: analysis.name)
def test_the_medium_case_derives_what_clingo_derives(analysis: Any) -> None:
    facts = analysis.facts("medium", 7)
    program = parse(analysis.program, f"{analysis.name}.dl")
    inputs = {predicate for predicate, _args in facts}
    model = evaluate(check(program), [(p, args, ("input", line)) for line, (p, args) in enumerate(facts, 1)])
    theirs = clingo_model(program, facts)
    derived = [p for p in model.predicates() if p not in inputs]
    assert derived and all(model.facts(p) for p in derived)
    for predicate in derived:
        assert model.facts(predicate) == theirs.get(predicate, set()), predicate
    predicate = max(derived, key=lambda p: len(model.facts(p)))
    args = max(model.facts(predicate))
    proof = model.proof(predicate, args)
    given = set(facts)
    assert proof.rule is not None and proof.leaves()
    assert all(
        (leaf.atom.predicate, leaf.atom.args) in given and leaf.span[0] == "input" for leaf in proof.leaves()
    )

"""The benchmark's real programs at their medium size: the engine derives exactly the facts clingo
does, and a proof of a derived fact rests on input facts with their spans (no time is measured)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from datalog_clingo import clingo_model

from miners.datalog import check, evaluate, parse

ANALYSES = Path(__file__).resolve().parents[3] / "benchmarks" / "_analyses.py"


def _analyses() -> ModuleType:
    spec = importlib.util.spec_from_file_location("datalog_analyses", ANALYSES)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


MODULE = _analyses()


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
    assert all((leaf.atom.predicate, leaf.atom.args) in given and leaf.span[0] == "input" for leaf in proof.leaves())

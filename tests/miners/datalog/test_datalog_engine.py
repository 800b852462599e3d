"""Evaluation: the dialect's semantics on small programs whose models are known by hand."""

from __future__ import annotations

import gc
import math
from collections.abc import Iterable
from enum import Enum, IntEnum

import pytest

from ouroboros_gates.miners.datalog import FactError, InputFact, Model, Value, check, evaluate, parse
from ouroboros_gates.miners.datalog.codegen import compile_plan
from ouroboros_gates.miners.datalog.plan import Join, plan_rule
from ouroboros_gates.miners.datalog.syntax import format_value


def run(text: str, facts: Iterable[InputFact] = ()) -> Model:
    return evaluate(check(parse(text, "t.dl")), facts)


def edges(*pairs: tuple[Value, Value]) -> list[InputFact]:
    return [("edge", pair, None) for pair in pairs]


CLOSURE = "path(X, Y) :- edge(X, Y).\npath(X, Z) :- path(X, Y), edge(Y, Z).\n"


def test_transitive_closure_of_a_chain_with_a_cycle() -> None:
    model = run(CLOSURE, edges((1, 2), (2, 3), (3, 1), (3, 4)))
    reach = {(x, y) for x in (1, 2, 3) for y in (1, 2, 3, 4)}
    assert model.facts("path") == reach


def test_doubly_recursive_closure_reads_a_growing_relation_through_its_index() -> None:
    chain = [(n, n + 1) for n in range(40)]
    model = run("path(X, Y) :- edge(X, Y).\npath(X, Z) :- path(X, Y), path(Y, Z).", edges(*chain))
    assert model.facts("path") == {(x, y) for x in range(41) for y in range(x + 1, 41)}


def test_mutual_recursion() -> None:
    text = "even(0).\neven(Y) :- odd(X), succ(X, Y).\nodd(Y) :- even(X), succ(X, Y)."
    model = run(text, [("succ", (n, n + 1), None) for n in range(9)])
    assert model.facts("even") == {(0,), (2,), (4,), (6,), (8,)}
    assert model.facts("odd") == {(1,), (3,), (5,), (7,), (9,)}


def test_stratified_negation_sees_the_whole_lower_stratum() -> None:
    text = CLOSURE + "node(X) :- edge(X, _).\nnode(Y) :- edge(_, Y).\nunreached(X) :- node(X), !path(1, X)."
    model = run(text, edges((1, 2), (2, 3), (4, 5)))
    assert model.facts("unreached") == {(1,), (4,), (5,)}


def test_negation_with_anonymous_positions_means_no_fact_matches() -> None:
    text = (
        "sink(X) :- node(X), !edge(X, _).\nisolated(X) :- node(X), !edge(X, _), !edge(_, X).\nnone :- "
        "!edge(_, _)."
    )
    facts = [("node", (n,), None) for n in (1, 2, 3, 4)] + edges((1, 2), (2, 3))
    model = run(text, facts)
    assert model.facts("sink") == {(3,), (4,)}
    assert model.facts("isolated") == {(4,)}
    assert model.facts("none") == set()
    assert run(text, [("node", (1,), None)]).facts("none") == {()}


@pytest.mark.parametrize(
    ("builtin", "left", "right", "holds"),
    [
        ("gt", 2, 1, True),
        ("gt", 1, 1, False),
        ("ge", 1, 1.0, True),
        ("lt", -1.5, 0, True),
        ("le", "a", "b", True),
        ("gt", "b", "ab", True),
        ("lt", "B", "a", True),
        ("gt", "a", 1, False),
        ("lt", "a", 1, False),
        ("ge", 1, "a", False),
        ("le", 1, "a", False),
        ("eq", 1, 1.0, True),
        ("eq", "1", 1, False),
        ("ne", "1", 1, True),
        ("ne", 2, 2, False),
        ("eq", "x", "x", True),
    ],
)
def test_builtins(builtin: str, left: Value, right: Value, holds: bool) -> None:
    facts: list[InputFact] = [("pair", (left, right), None)]
    by_variables = run(f"yes :- pair(A, B), {builtin}(A, B).", facts)
    assert by_variables.facts("yes") == ({()} if holds else set())
    by_constants = run(f"yes :- go, {builtin}({format_value(left)}, {format_value(right)}).\ngo.")
    assert by_constants.facts("yes") == ({()} if holds else set())
    mixed = run(f"yes :- pair(A, _), {builtin}(A, {format_value(right)}).", facts)
    assert mixed.facts("yes") == ({()} if holds else set())


def test_the_template_rule_fires_above_the_knee_only() -> None:
    text = "invisible(R) :- gated(R), score(R, S), knee(K), gt(S, K)."
    facts: list[InputFact] = [
        ("gated", ("4e31",), None),
        ("gated", ("4e60",), None),
        ("score", ("4e31", 468), None),
        ("score", ("4e60", 1259), None),
        ("knee", (468,), None),
    ]
    assert run(text, facts).facts("invisible") == {("4e60",)}


def test_constants_and_repeated_variables_in_atoms_and_heads() -> None:
    text = (
        'loop(X) :- edge(X, X).\nfrom_a(Y) :- edge("a", Y).\n'
        'tagged("t", X, 7) :- loop(X).\nsym(X) :- edge(X, Y), edge(Y, X).'
    )
    model = run(text, edges(("a", "a"), ("a", "b"), ("b", "a"), ("c", "c"), ("c", 1)))
    assert model.facts("loop") == {("a",), ("c",)}
    assert model.facts("from_a") == {("a",), ("b",)}
    assert model.facts("tagged") == {("t", "a", 7), ("t", "c", 7)}
    assert model.facts("sym") == {("a",), ("b",), ("c",)}


def test_numbers_are_one_type() -> None:
    model = run("same(X) :- a(X), b(X).", [("a", (1,), None), ("b", (1.0,), None), ("a", ("1",), None)])
    assert model.facts("same") == {(1,)}


def test_zero_arity_predicates() -> None:
    model = run("ready :- go(), !stop.\ngo.", [])
    assert model.facts("ready") == {()}
    assert run("ready :- go(), !stop.\ngo.\nstop.").facts("ready") == set()


def test_facts_in_the_program_and_input_facts_for_derived_predicates_seed_recursion() -> None:
    text = CLOSURE + "path(9, 1).\n"
    model = run(text, [*edges((1, 2), (2, 3)), ("path", (8, 1), "seed")])
    assert model.facts("path") == {(1, 2), (2, 3), (1, 3), (9, 1), (9, 2), (9, 3), (8, 1), (8, 2), (8, 3)}


def test_input_predicates_unknown_to_the_program_are_kept() -> None:
    model = run("p(X) :- q(X).", [("q", (1,), None), ("extra", ("x", 2), None)])
    assert model.facts("extra") == {("x", 2)}
    assert model.facts("never_seen") == set()
    assert "extra" in model.predicates()
    assert ("extra", ("x", 2)) in model and ("p", (1,)) in model and ("p", (2,)) not in model


class Colour(Enum):
    RED = "red"


class Level(IntEnum):
    HIGH = 3


class Name(str):
    pass


def test_input_values_are_normalised_to_plain_constants() -> None:
    model = run('hot(X) :- level(X, 3), eq(X, "red").', [("level", (Name("red"), Level.HIGH), None)])
    assert model.facts("hot") == {("red",)}
    (row,) = model.facts("level")
    assert type(row[0]) is str and type(row[1]) is int


@pytest.mark.parametrize(
    ("fact", "message"),
    [
        (("edge", (1,), "s1"), "input fact edge(1) has 1 arguments; edge takes 2 (span 's1')"),
        (("edge", (1, True), None), "has the value True: an argument is a string, an int or a float"),
        (("edge", (1, math.nan), None), "has the value nan"),
        (("edge", (1, None), None), "has the value None"),
        (("edge", (1, Colour.RED), None), "has the value <Colour.RED: 'red'>"),
        ((7, (1, 2), None), "input fact with predicate 7: a predicate is a string"),
        (("name", (1,), None), "input fact name(1) does not match .decl name('symbol',)"),
    ],
)
def test_bad_input_facts_are_refused(fact: InputFact, message: str) -> None:
    checked = check(parse(".decl name(n: symbol)\nreach(X) :- edge(X, _), name(X)."))
    with pytest.raises(FactError) as caught:
        evaluate(checked, [fact])
    assert message in str(caught.value)


def test_an_input_predicate_unknown_to_the_program_keeps_its_first_arity() -> None:
    with pytest.raises(FactError, match=r"input fact extra\(1, 2\) has 2 arguments; extra takes 1"):
        run("p(X) :- q(X).", [("extra", (1,), None), ("extra", (1, 2), None)])


def test_evaluation_leaves_the_garbage_collector_as_it_found_it() -> None:
    assert gc.isenabled()
    run(CLOSURE, edges((1, 2)))
    assert gc.isenabled()
    gc.disable()
    try:
        run(CLOSURE, edges((1, 2)))
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(FactError):
        run(CLOSURE, [("edge", (1,), None)])
    assert gc.isenabled()


def test_an_evaluated_program_can_be_evaluated_again_on_other_facts() -> None:
    checked = check(parse(CLOSURE))
    assert evaluate(checked, edges((1, 2))).facts("path") == {(1, 2)}
    assert evaluate(checked, edges((5, 6), (6, 7))).facts("path") == {(5, 6), (6, 7), (5, 7)}


def test_plans_start_from_the_delta_then_prefer_bound_arguments_and_place_tests_early() -> None:
    (rule,) = check(
        parse("x(1, 1).\nq(1).\nr(1, 1).\nx(A, C) :- q(A), r(A, B), x(B, C), !q(C), gt(C, A).")
    ).rules
    plan = plan_rule(rule, 2, {"q": 1000, "r": 10, "x": 5})
    joins = [step for step in plan.steps if isinstance(step, Join)]
    assert [join.atom.predicate for join in joins] == ["x", "r", "q"]
    assert [join.bound for join in joins] == [(), (1,), (0,)]
    kinds = [type(step).__name__ for step in plan.steps]
    assert kinds == ["Join", "Test", "Join", "Test", "Join"]
    text = compile_plan(plan).text
    assert "for t2 in D:" in text and ".get(" in text and "in a" in text


def test_generated_code_holds_no_text_from_the_program() -> None:
    text = 'p(X) :- q(X, "__import__(\'os\')"), !r(X, "\\"; drop"), gt(X, 3).'
    (rule,) = check(parse(text)).rules
    source = compile_plan(plan_rule(rule, None, {})).text
    assert "import" not in source and "drop" not in source and '"' not in source and "'" not in source

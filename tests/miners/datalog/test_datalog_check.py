"""The contract: safety, stratification, arities and declarations, with the messages users read."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from itertools import pairwise

import pytest
from datalog_naive import NotStratified, levels
from datalog_programs import Generated, programs
from hypothesis import given, settings

from ouroboros_gates.miners.datalog import (
    ArityError,
    Atom,
    ContractError,
    DeclarationError,
    Negation,
    UndefinedPredicateError,
    UnsafeRuleError,
    UnstratifiedError,
    check,
    check_defined,
    parse,
)
from ouroboros_gates.miners.datalog.check import MAX_POSITIVE_ATOMS


def _refusal(text: str, error: type[ContractError] = ContractError) -> str:
    with pytest.raises(error) as caught:
        check(parse(text, "rules.dl"))
    return str(caught.value)


def test_negation_of_an_unbound_variable_is_refused_with_the_contract_wording() -> None:
    message = _refusal("ok(X) :- a(X).\nbad(X) :- a(X), !b(X, Y).", UnsafeRuleError)
    assert message == (
        "rules.dl:2: negation before its variables are bound: Y in !b(X, Y) of bad(X) :- a(X), !b(X, Y)."
    )


def test_a_negation_written_before_the_atom_that_binds_it_is_safe() -> None:
    checked = check(parse("p(X) :- !b(X), a(X), !c(X, _)."))
    assert checked.rules[0].body[0] == parse("p(X) :- !b(X).").rules[0].body[0]


def test_an_unbound_head_variable_is_refused() -> None:
    message = _refusal("p(1).\nq(X, Y) :- p(X).", UnsafeRuleError)
    assert message == "rules.dl:2: unbound variable Y in head of q(X, Y) :- p(X)."
    assert "unbound variable X in head" in _refusal("p(X).", UnsafeRuleError)
    assert "unbound variable X in head" in _refusal("p(X) :- !q(X).", UnsafeRuleError)


def test_a_variable_bound_only_by_a_negation_or_a_builtin_does_not_bind_the_head() -> None:
    assert "unbound variable Y in head" in _refusal("p(X, Y) :- a(X), eq(X, Y).", UnsafeRuleError)


def test_an_anonymous_head_variable_is_refused() -> None:
    assert "anonymous variable '_' in head of p(_) :- q(_)." in _refusal("p(_) :- q(_).", UnsafeRuleError)


def test_a_builtin_over_an_unbound_variable_is_refused_naming_the_builtin() -> None:
    message = _refusal("\n\nhot(R) :- score(R, S), gt(S, K).", UnsafeRuleError)
    assert message == "rules.dl:3: unbound variable K in builtin gt of hot(R) :- score(R, S), gt(S, K)."
    assert "anonymous variable '_' in builtin le" in _refusal("p(X) :- q(X), le(X, _).", UnsafeRuleError)


def test_recursion_through_negation_names_the_cycle_and_the_rule() -> None:
    assert _refusal("p(X) :- q(X), !p(X).", UnstratifiedError) == (
        "rules.dl:1: recursion through negation: p -> p in p(X) :- q(X), !p(X)."
    )
    message = _refusal("p(X) :- a(X), !q(X).\nq(X) :- p(X).", UnstratifiedError)
    assert message == "rules.dl:1: recursion through negation: p -> q -> p in p(X) :- a(X), !q(X)."
    long = "p(X) :- a(X), !q(X).\nq(X) :- r(X).\nr(X) :- s(X), a(X).\ns(X) :- p(X).\ns(X) :- q(X)."
    assert "recursion through negation: p -> q -> r -> s -> p in" in _refusal(long, UnstratifiedError)


def test_negation_of_a_lower_stratum_is_fine_and_strata_come_in_dependency_order() -> None:
    checked = check(
        parse(
            "reach(X) :- start(X).\nreach(Y) :- reach(X), edge(X, Y).\n"
            "cut(X) :- node(X), !reach(X).\nnode(X) :- edge(X, _).\nlonely(X) :- cut(X), !reach(X)."
        )
    )
    order = [stratum.predicates for stratum in checked.strata]
    assert order.index(("reach",)) < order.index(("cut",)) < order.index(("lonely",))
    assert order.index(("node",)) < order.index(("cut",))
    assert [s.recursive for s in checked.strata if s.predicates == ("reach",)] == [True]
    assert [s.recursive for s in checked.strata if s.predicates == ("cut",)] == [False]


def test_mutual_recursion_is_one_stratum() -> None:
    checked = check(parse("even(0).\neven(Y) :- odd(X), succ(X, Y).\nodd(Y) :- even(X), succ(X, Y)."))
    (stratum,) = checked.strata
    assert stratum.predicates == ("even", "odd") and stratum.recursive and stratum.rules == (0, 1)


def test_one_predicate_with_two_arities_names_both_places() -> None:
    message = _refusal("p(X) :- edge(X, Y).\n\nq(X) :- edge(X, Y, Z).", ArityError)
    assert message == (
        "rules.dl:3: predicate edge used with arity 2 at rules.dl:1 and used with arity 3 at rules.dl:3"
    )
    declared = _refusal(".decl edge(a: number, b: number)\np(X) :- edge(X).", ArityError)
    assert "edge declared with arity 2 at rules.dl:1 and used with arity 1 at rules.dl:2" in declared


def test_a_predicate_read_but_never_defined_is_refused_once_the_input_is_known() -> None:
    text = "/* predicate\n   hot(R): run R is hot. */\nhot(R) :- run(R),\n  !cold(R).\nwarm(R) :- hot(R).\n"
    checked = check(parse(text, "rules.dl"))
    with pytest.raises(UndefinedPredicateError) as caught:
        check_defined(checked, {"run"})
    assert str(caught.value) == (
        "rules.dl:4: cold is defined nowhere (no rule, fact, .decl, /* predicate */ entry or input fact): "
        "read in hot(R) :- run(R), !cold(R)."
    )
    with pytest.raises(UndefinedPredicateError, match="run is defined nowhere"):
        check_defined(checked, {"cold"})
    check_defined(checked, {"run", "cold"})
    documented = (
        "/* predicate\n   hot(R): run(R) holds and cold(R) does not. */\nhot(R) :- run(R), !cold(R).\n"
    )
    check_defined(check(parse(documented, "rules.dl")), ())
    check_defined(check(parse(".decl run(r: symbol)\ncold(1).\nhot(R) :- run(R), !cold(R).", "rules.dl")), ())


def test_declarations_may_not_repeat_and_constants_must_match_their_types() -> None:
    twice = _refusal(".decl p(a: number)\n.decl p(b: number)", DeclarationError)
    assert twice == "rules.dl:2: predicate p declared twice: at rules.dl:1 and at rules.dl:2"
    typed = _refusal('.decl score(r: symbol, s: number)\nhot(R) :- score(R, "high").', DeclarationError)
    assert typed == 'rules.dl:2: argument 2 of score(R, "high") is "high", not a number as score declares'
    assert "is 7, not a symbol" in _refusal(".decl name(n: symbol)\nname(7).", DeclarationError)
    check(parse('.decl score(r: symbol, s: number)\nscore("a", 1.5).\nhot(R) :- score(R, 2).'))


def test_rules_joining_too_many_atoms_are_refused_before_code_is_generated() -> None:
    body = ", ".join(f"e(X{n}, X{n + 1})" for n in range(MAX_POSITIVE_ATOMS + 1))
    message = _refusal(f"far(X0) :- {body}.")
    assert f"the engine joins at most {MAX_POSITIVE_ATOMS}" in message


def test_checking_names_positive_anonymous_variables_apart_and_records_witnesses() -> None:
    (rule,) = check(parse("p(X) :- q(X, _, Y), r(_, Y), !s(X, _).")).rules
    assert str(rule.body[0]) == "q(X, _1, Y)" and str(rule.body[1]) == "r(_2, Y)"
    assert isinstance(rule.body[2], Negation) and str(rule.body[2]) == "!s(X, _)"
    assert rule.witnesses == ("_1", "Y", "_2")


def _dependency_edges(generated: Generated) -> set[tuple[str, str, bool]]:
    edges = set()
    for rule in generated.program.rules:
        for literal in rule.body:
            if isinstance(literal, Atom):
                edges.add((rule.head.predicate, literal.predicate, False))
            elif isinstance(literal, Negation):
                edges.add((rule.head.predicate, literal.atom.predicate, True))
    return edges


def test_exactly_the_programs_without_a_stratification_are_refused_naming_a_real_cycle() -> None:
    outcomes: Counter[str] = Counter()

    @settings(max_examples=200, deadline=None)
    @given(programs(stratified=False))
    def agree(generated: Generated) -> None:
        try:
            levels(generated.program)
            stratifiable = True
        except NotStratified:
            stratifiable = False
        try:
            check(generated.program)
            outcomes["accepted"] += 1
            assert stratifiable
        except UnstratifiedError as error:
            outcomes["refused"] += 1
            assert not stratifiable
            cycle = re.search(r"recursion through negation: (\S+(?: -> \S+)+) in ", str(error))
            assert cycle is not None
            names = cycle.group(1).split(" -> ")
            edges = {(head, body) for head, body, _ in _dependency_edges(generated)}
            assert names[0] == names[-1]
            assert (names[0], names[1], True) in _dependency_edges(generated)
            assert all(pair in edges for pair in pairwise(names))

    agree()
    assert outcomes["accepted"] >= 30 and outcomes["refused"] >= 30, outcomes


def test_a_dependency_chain_thousands_of_predicates_deep_is_stratified_without_recursion() -> None:
    depth = 3000
    text = "".join(f"p{n}(X) :- p{n + 1}(X), !q{n}(X).\n" for n in range(depth))
    checked = check(parse(text))
    assert [stratum.predicates for stratum in checked.strata][:2] == [(f"p{depth - 1}",), (f"p{depth - 2}",)]
    assert len(checked.strata) == depth


def test_rules_are_numbered_by_position_even_in_a_program_assembled_by_hand() -> None:
    program = parse("a(X) :- e(X).\nb(X) :- e(X).\nc(X) :- b(X).")
    mutant = replace(program, rules=(program.rules[0], program.rules[2]))
    checked = check(mutant)
    assert [rule.rule.index for rule in checked.rules] == [0, 1]
    assert [stratum.rules for stratum in checked.strata] == [(0,), (1,)]

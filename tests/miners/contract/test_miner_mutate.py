"""Mutation testing: each operator on a toy miner, refusals and equivalents leaving the count, the
knee-binds check killing the knee written as a constant, and the gate."""

from __future__ import annotations

import pytest
from miner_builders import facts_for, labels_for

from ouroboros_gates.miners import (
    CHECKS,
    TEMPLATE_FLOOR,
    Extracted,
    Labels,
    check_rules,
    mutants,
    mutate,
    run_checks,
)
from ouroboros_gates.miners.checks import KNEE_BINDS
from ouroboros_gates.miners.mutate import mutant_text
from ouroboros_gates.schemas import Fact, MutantOutcome, MutationOperator, Span, Text

TOY = """\
/* predicate flagged(R): a slow run that is not excused. */
slow(R) :- run(R), score(R, S), knee(K), gt(S, K).
flagged(R) :- slow(R), !excused(R).
"""
# Both clean runs share the smallest score, so neither label can flip with the knee moved below it;
# the excused run d would be flagged without its excuse.
SCORES = {"a": 900.0, "b": 300.0, "e": 300.0, "d": 950.0, "c": 500.0}


def _toy() -> tuple[Extracted, Labels]:
    base = facts_for(SCORES)
    facts = {
        instance: (
            Fact(predicate="run", args=(Text(text=instance),), span=Span(file=f"{instance}.jsonl", line=1)),
            *(f for f in found if f.predicate == "score"),
            *(
                [Fact(predicate="excused", args=(Text(text="d"),), span=Span(file="d.jsonl", line=3))]
                if instance == "d"
                else []
            ),
        )
        for instance, found in base.facts.items()
    }
    labels = labels_for(
        [
            ("a", True, 0, 60.0),
            ("b", False, 1, None),
            ("e", False, 2, None),
            ("d", False, 3, None),
            ("c", True, 4, 600.0),
        ]
    )
    return Extracted(facts, base.owners), labels


def test_the_toy_passes_its_checks() -> None:
    extracted, labels = _toy()
    run = run_checks("toy", check_rules(TOY).program, ("flagged",), labels, extracted)
    assert run.refused is None and run.failed == ()
    assert run.result is not None and run.result.kappa_star == 300 and run.result.counts.tp == ("c",)


def test_each_operator_makes_its_mutants() -> None:
    _extracted, labels = _toy()
    made = {(m.operator, m.description) for m in mutants(check_rules(TOY).program, labels, 300)}
    expected = {
        (MutationOperator.DROP_LITERAL, "line 2: drop `run(R)`"),
        (MutationOperator.NEGATE_LITERAL, "line 2: `run(R)` -> `!run(R)`"),
        (MutationOperator.SWAP_COMPARISON, "line 2: `gt(S, K)` -> `le(S, K)`"),
        (MutationOperator.KNEE_CONSTANT, "line 2: `gt(S, K)` -> `gt(S, 300)`"),
        (MutationOperator.NEGATE_LITERAL, "line 3: `!excused(R)` -> `excused(R)`"),
        (MutationOperator.DROP_RULE, "line 3: drop rule `flagged(R) :- slow(R), !excused(R).`"),
        (MutationOperator.FLIP_LABEL, "labels row 2: b - -> +"),
        (MutationOperator.FLIP_LABEL, "labels row 1: a + -> -"),
    }
    assert expected <= made
    assert {operator for operator, _ in made} == set(MutationOperator)
    assert len(made) == 4 * 2 + 2 * 2 + 2 + 1 + 5  # drop/negate per literal, swap + knee, rules, labels


def test_no_knee_constant_mutant_without_a_fitted_knee() -> None:
    _extracted, labels = _toy()
    assert MutationOperator.KNEE_CONSTANT not in {
        m.operator for m in mutants(check_rules(TOY).program, labels, None)
    }


def test_outcomes_on_the_toy() -> None:
    extracted, labels = _toy()
    result = mutate("toy", check_rules(TOY).program, ("flagged",), labels, extracted)
    outcomes = {r.description: r for r in result.report.mutants}
    assert outcomes["line 2: drop `run(R)`"].outcome is MutantOutcome.EQUIVALENT
    assert "same verdicts as the original" in outcomes["line 2: drop `run(R)`"].reason
    refused = outcomes["line 2: `score(R, S)` -> `!score(R, S)`"]
    assert (
        refused.outcome is MutantOutcome.REFUSED
        and "negation before its variables are bound" in refused.reason
    )
    assert outcomes["line 3: drop `slow(R)`"].outcome is MutantOutcome.REFUSED
    assert outcomes["line 3: drop `!excused(R)`"].killed_by == ("fixtures_match_labels",)
    assert outcomes["line 2: `gt(S, K)` -> `le(S, K)`"].outcome is MutantOutcome.KILLED
    assert outcomes["line 3: drop rule `flagged(R) :- slow(R), !excused(R).`"].outcome is MutantOutcome.KILLED
    assert all(
        r.outcome is MutantOutcome.KILLED
        for r in result.report.mutants
        if r.operator is MutationOperator.FLIP_LABEL
    )
    assert result.report.survived == 0 and result.report.score == 1.0 and result.holds
    assert all(set(r.killed_by) <= set(CHECKS) for r in result.report.mutants)


def test_knee_binds_is_the_only_check_that_kills_the_constant_knee() -> None:
    extracted, labels = _toy()
    result = mutate("toy", check_rules(TOY).program, ("flagged",), labels, extracted)
    constant = next(r for r in result.report.mutants if r.operator is MutationOperator.KNEE_CONSTANT)
    assert constant.outcome is MutantOutcome.KILLED and constant.killed_by == (KNEE_BINDS,)
    assert [m.description for _n, m in result.only_knee_binds()] == ["line 2: `gt(S, K)` -> `gt(S, 300)`"]
    assert "The knee-binds check is the only check that kills" in result.markdown()


def test_a_knee_written_as_a_constant_fails_the_checks() -> None:
    extracted, labels = _toy()
    for text in (
        TOY.replace("gt(S, K)", "gt(S, 300)"),  # the knee relation still read, its value not
        TOY.replace("knee(K), gt(S, K)", "gt(S, 300)"),  # the knee gone altogether
    ):
        run = run_checks("toy", check_rules(text).program, ("flagged",), labels, extracted)
        assert run.failed == (KNEE_BINDS,), text
        assert "knee" in run.failures[KNEE_BINDS]


def test_a_survivor_that_changes_a_labelled_verdict_fails_the_gate() -> None:
    # The sample corpus's shape: the smallest positive and the largest negative sit by the knee, so the
    # labels do not pin it: flipping either still passes every check with the knee moved.
    scores = {"n1": 302.0, "n2": 610.0, "p1": 1259.0, "n3": 468.0, "p2": 3089.0, "p3": 2240.0, "n4": 185.0}
    labels = labels_for([(i, i.startswith("p"), h, None) for h, i in enumerate(scores)])
    rules = check_rules("/* predicate x */ invisible(R) :- gated(R), score(R, S), knee(K), gt(S, K).")
    result = mutate("m", rules.program, ("invisible",), labels, facts_for(scores))
    survivors = result.survivors
    assert survivors and all(r.changes_labelled_verdict for _m, r in survivors)
    assert result.report.score is not None and result.report.score < TEMPLATE_FLOOR
    rejections = result.rejections()
    assert any("below the floor" in why for why in rejections)
    assert any("survivor changes a labelled verdict: flip_label" in why for why in rejections)
    mutant, _result = survivors[0]
    assert mutant_text(mutant).count("\n") == 1 and "\t" in mutant_text(mutant)  # its label row
    assert "fails:" in result.markdown()


def test_a_rule_survivor_is_printed_with_its_rules() -> None:
    # Without the excused run labelled, dropping !excused(R) changes only an unlabelled verdict.
    extracted, labels = _toy()
    rows = [r for r in labels.rows if r.instance != "d"]
    labels = Labels(labels.file, tuple(rows), tuple(range(1, len(rows) + 1)))
    result = mutate("toy", check_rules(TOY).program, ("flagged",), labels, extracted)
    (mutant, survivor), *_ = result.survivors
    assert mutant.description == "line 3: drop `!excused(R)`" and not survivor.changes_labelled_verdict
    assert "flagged(R) :- slow(R)." in mutant_text(mutant)
    assert result.rejections() == [
        f"mutation score {result.report.score:.2f} is below the floor {TEMPLATE_FLOOR:.2f}"
    ]


def test_an_original_that_fails_its_checks_fails_the_gate() -> None:
    extracted, labels = _toy()
    result = mutate(
        "toy", check_rules(TOY.replace("gt(S, K)", "lt(S, K)")).program, ("flagged",), labels, extracted
    )
    assert not result.holds and result.rejections()[0].startswith("the miner fails its own checks")


@pytest.mark.parametrize(
    ("builtin", "opposite"),
    [("gt", "le"), ("ge", "lt"), ("lt", "ge"), ("le", "gt"), ("eq", "ne"), ("ne", "eq")],
)
def test_swap_is_the_negation(builtin: str, opposite: str) -> None:
    program = check_rules(f"/* predicate p */ p(X) :- q(X, Y), {builtin}(X, Y).").program
    swapped = [
        m for m in mutants(program, labels_for([]), None) if m.operator is MutationOperator.SWAP_COMPARISON
    ]
    assert [m.description for m in swapped] == [f"line 1: `{builtin}(X, Y)` -> `{opposite}(X, Y)`"]

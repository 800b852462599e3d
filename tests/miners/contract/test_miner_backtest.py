"""The walk-forward backtest: the worked example (docs/loop.md), the split, a rule without a knee, and
invariants."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from miner_builders import DRAFT_PR_LATE, facts_for, labels_for

from ouroboros_gates.miners import Extracted, Rules, backtest, best_knee, check_rules, split
from ouroboros_gates.miners.knee import confusion
from ouroboros_gates.schemas import Fact, Number, Span, Text


@pytest.fixture(scope="module")
def draft_rules() -> Rules:
    """The template's rule, from text."""
    return check_rules(DRAFT_PR_LATE, "rules.dl")


SEED = {"4e31": 3089.0, "4e47": 468.0, "4e60": 1259.0}
SEED_LABELS = [("4e31", True, 0.0, 2220.0), ("4e47", False, 9.56, None), ("4e60", True, 12.77, 772.0)]


def test_the_seeds_worked_example(draft_rules: Rules) -> None:
    result = backtest("draft-pr-late", draft_rules, ("invisible",), labels_for(SEED_LABELS), facts_for(SEED))
    assert result.candidates == (468, 1259, 3089)
    assert result.kappa_star == 468
    assert result.fit == ("4e31", "4e47") and result.judged == ("4e60",)
    assert (result.counts.tp, result.counts.fp, result.counts.fn) == (("4e60",), (), ())
    assert result.lead == {"4e60": 304.0}
    record = result.record()
    assert record.kappa_star == 468.0 and record.families == 3 and record.passed
    assert record.lead_s == {"4e60": 304.0} and record.pbo_status == "waits for labels"
    rows = dict(result.rows())
    assert rows["Backtest $\\kappa^\\star$"].startswith(
        "468 (argmax precision on $\\Lambda_{\\le t}$ s.t. FN = 0;"
    )
    assert rows["Backtest TP"] == "1: 4e60" and rows["Backtest FP"] == "0" and rows["Backtest FN"] == "0"


def test_the_split_is_the_start_of_label_ceil_half() -> None:
    labels = labels_for(
        [("a", True, 0, None), ("b", False, 1, None), ("c", True, 2, None), ("d", False, 3, None)]
    )
    t, fit, judged = split(labels.ordered())
    assert t == labels.rows[1].start
    assert [r.instance for r in fit] == ["a", "b"] and [r.instance for r in judged] == ["c", "d"]
    t, fit, judged = split(labels_for([("a", True, 0, None)]).ordered())
    assert [r.instance for r in fit] == ["a"] and judged == ()


def test_labels_sharing_the_split_start_all_fit() -> None:
    labels = labels_for(
        [("a", True, 0, None), ("b", False, 1, None), ("c", True, 1, None), ("d", False, 3, None)]
    )
    _t, fit, judged = split(labels.ordered())
    assert [r.instance for r in fit] == ["a", "b", "c"] and [r.instance for r in judged] == ["d"]


def test_a_rule_without_a_knee_still_judges() -> None:
    rules = check_rules("/* predicate long(R): a run over 1000 s. */\nlong(R) :- took(R, S), gt(S, 1000).\n")
    took = Extracted(
        {
            i: (
                Fact(
                    predicate="took", args=(Text(text=i), Number(number=s)), span=Span(file=f"{i}.f", line=1)
                ),
            )
            for i, s in {"a": 2000.0, "b": 10.0, "c": 3000.0}.items()
        },
        {f"{i}.f": i for i in "abc"},
    )
    labels = labels_for([("a", True, 0, None), ("b", False, 1, None), ("c", True, 2, 60.0)])
    result = backtest("m", rules, ("long",), labels, took)
    assert result.candidates == () and result.kappa_star is None
    assert result.counts.tp == ("c",) and result.counts.fn == () and result.missed_nothing
    assert result.record().families == 0 and result.lead == {}
    assert "no `score` facts" in dict(result.rows())["Backtest $\\kappa^\\star$"]


def test_no_candidate_with_fn_zero_leaves_kappa_unset(draft_rules: Rules) -> None:
    # the only positive of the fit half has the smallest score: no knee below it exists
    extracted = facts_for({"a": 100.0, "b": 500.0, "c": 900.0})
    labels = labels_for([("a", True, 0, None), ("b", False, 1, None), ("c", True, 2, None)])
    result = backtest("m", draft_rules, ("invisible",), labels, extracted)
    assert result.kappa_star is None and result.counts.fn == ("c",) and not result.missed_nothing
    assert not result.record().passed


# Invariants over random records.

records = st.lists(
    st.tuples(st.integers(1, 40).map(lambda s: float(s * 50)), st.booleans(), st.integers(0, 10_000)),
    min_size=1,
    max_size=9,
)


def _build(
    drawn: list[tuple[float, bool, int]],
) -> tuple[dict[str, float], list[tuple[str, bool, float, float | None]]]:
    scores = {f"r{n}": score for n, (score, _p, _h) in enumerate(drawn)}
    rows = [
        (f"r{n}", positive, hours / 100, 600.0 if positive else None)
        for n, (_s, positive, hours) in enumerate(drawn)
    ]
    return scores, rows


@settings(max_examples=60, deadline=None)
@given(records)
def test_invariants(drawn: list[tuple[float, bool, int]]) -> None:
    rules = check_rules("/* predicate x */ invisible(R) :- gated(R), score(R, S), knee(K), gt(S, K).")
    scores, rows = _build(drawn)
    labels = labels_for(rows)
    result = backtest("m", rules, ("invisible",), labels, facts_for(scores))
    assert result.kappa_star is None or result.kappa_star in result.candidates
    assert set(result.candidates) == set(scores.values())
    assert set(result.fit) | set(result.judged) == set(scores) and not set(result.fit) & set(result.judged)
    positives = {i for i, p, _h, _f in rows if p}
    if result.kappa_star is not None:
        assert not confusion(result.verdicts[result.kappa_star].flagged, result.fit, positives).fn
    judged_positives = [i for i in result.judged if i in positives]
    assert len(result.counts.tp) + len(result.counts.fn) == len(judged_positives)
    assert set(result.lead) <= set(result.counts.tp)
    assert result.kappa_star == best_knee(
        {k: result.verdicts[k].flagged for k in result.candidates}, result.fit, positives
    )


@settings(max_examples=60, deadline=None)
@given(records, st.integers(1, 40).map(lambda s: float(s * 50)))
def test_a_far_later_negative_never_changes_the_fit(
    drawn: list[tuple[float, bool, int]], score: float
) -> None:
    """With n odd the split stays put, so a negative labelled after every other label leaves the fit
    half alone: κ* is unchanged when its score is already a candidate, and otherwise changes only to
    the new score: a knee where none fitted, or an equally good and smaller one on the fit half."""
    if len(drawn) % 2 == 0:
        drawn = drawn[:-1] or drawn
    if len(drawn) % 2 == 0:
        return
    rules = check_rules("/* predicate x */ invisible(R) :- gated(R), score(R, S), knee(K), gt(S, K).")
    scores, rows = _build(drawn)
    before = backtest("m", rules, ("invisible",), labels_for(rows), facts_for(scores))
    for new_score in (scores["r0"], score):
        after = backtest(
            "m",
            rules,
            ("invisible",),
            labels_for([*rows, ("late", False, 1000.0, None)]),
            facts_for({**scores, "late": new_score}),
        )
        assert after.fit == before.fit
        if new_score in before.candidates:
            assert after.kappa_star == before.kappa_star
        elif after.kappa_star != before.kappa_star:
            # only through K: the new score is the new knee, below the old one (or where none fitted)
            assert after.kappa_star == new_score
            if before.kappa_star is None:
                continue
            assert new_score < before.kappa_star
            positives = {i for i, p, _h, _f in rows if p}
            old = confusion(before.verdicts[before.kappa_star].flagged, before.fit, positives)
            new = confusion(after.verdicts[after.kappa_star].flagged, after.fit, positives)
            assert (old.tp, old.fp, old.fn) == (new.tp, new.fp, new.fn)

"""Learning curves: the inverse power law recovers a known curve; projections only when c excludes 0."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from _learn_fixtures import unit

from ouroboros_gates.decider.learn.curve import fit_power_law, learning_curve, projection
from ouroboros_gates.decider.learn.evaluate import Score
from ouroboros_gates.decider.learn.folds import Fold, plan_folds
from ouroboros_gates.decider.learn.labels import LabelledUnit
from ouroboros_gates.decider.memory import Memory, MemoryExample
from ouroboros_gates.schemas import Example


def test_power_law_recovers_known_parameters() -> None:
    n = [10, 20, 40, 80, 160]
    m = [0.9 - 0.5 * x**-0.7 for x in n]
    fit = fit_power_law(n, m)
    assert fit is not None
    a, b, c = fit
    assert (
        a == pytest.approx(0.9, abs=1e-3)
        and b == pytest.approx(0.5, abs=1e-2)
        and c == pytest.approx(0.7, abs=0.01)
    )
    assert fit_power_law([10, 10, 20], [0.5, 0.6, 0.7]) is None  # fewer than three sizes


def _memory(groups: int) -> Memory:
    examples = []
    for g in range(groups):
        for y in (0, 1):
            example = Example(
                excerpt_sha=hashlib.sha256(f"{g}{y}".encode()).hexdigest(),
                x={},
                y=y,
                group=f"r/{g}",
                language="python",
                family="fam",
            )
            examples.append(MemoryExample(example=example, excerpt=f"{g} {y}", source="a" if g % 2 else "b"))
    return Memory(examples)


def _scorer_for(memory: Memory) -> Any:
    # the more memory groups, the sharper the score: a curve that rises and flattens
    k = len({e.group for e in memory.examples})

    def score(u: LabelledUnit, fold: Fold) -> Score:
        sharp = k / (k + 10)
        noise = int(hashlib.sha256(u.uid.encode()).hexdigest()[:4], 16) / 65536 - 0.5
        return Score(0.5 + (0.4 * sharp if u.y else -0.4 * sharp) + 3 * noise * (1 - sharp))

    return score


def test_curve_points_and_fit() -> None:
    units = [unit(f"r/{g}", "fam", y, n=g) for g in range(80) for y in (0, 1)]
    plan = plan_folds(units, seed=1)
    analysed: dict[str, Any] = dict.fromkeys([u.uid for u in units], object())
    curve = learning_curve(units, plan, analysed, _memory(80), _scorer_for, size=60, resamples=100)
    kinds = [(p["kind"], p["share"], p["draw"]) for p in curve["points"]]
    assert kinds[:6] == [
        ("size", 0.0, 0),
        ("size", 0.25, 0),
        ("size", 0.25, 1),
        ("size", 0.5, 0),
        ("size", 0.5, 1),
        ("size", 1.0, 0),
    ]
    assert kinds[6:] == [("sources", 1.0, 0)]  # 1 of the 2 sources (all of them is the 100% point)
    assert curve["subset_units"] == 60
    sizes = [p["memory_groups"] for p in curve["points"][:6]]
    assert sizes == [0, 20, 20, 40, 40, 80]
    pr = [p["pr_auc"]["value"] for p in curve["points"][:6]]
    assert pr[-1] > pr[1] > pr[0]
    fit = curve["fit"]
    assert fit["fitted"] and fit["c"] > 0
    assert fit["c_low"] is not None and fit["c_low"] > 0  # the curve rises: c is not 0
    assert fit["projection"] == projection(fit["a"], fit["b"], fit["c"], fit["c_low"], fit["c_high"], 80)


def test_projection_only_when_c_is_identified_and_not_zero() -> None:
    got = projection(0.9, 0.5, 0.7, 0.3, 1.2, 100)
    assert isinstance(got, dict) and got["2.0x"] == pytest.approx(0.9 - 0.5 * 200**-0.7)
    assert str(projection(0.9, 0.5, 0.7, 0.0, 1.2, 100)).startswith(
        "not projected: the interval on c does not"
    )
    assert "c unidentified" in str(projection(0.9, 0.5, 2.9, 0.3, 3.0, 100))


def test_a_flat_curve_is_not_projected() -> None:
    units = [unit(f"r/{g}", "fam", y, n=g) for g in range(40) for y in (0, 1)]
    plan = plan_folds(units, seed=2)
    analysed: dict[str, Any] = dict.fromkeys([u.uid for u in units], object())

    def flat(memory: Memory) -> Any:
        def score(u: LabelledUnit, fold: Fold) -> Score:
            noise = int(hashlib.sha256(u.uid.encode()).hexdigest()[:4], 16) / 65536
            return Score(0.3 * u.y + 0.7 * noise)

        return score

    fit = learning_curve(units, plan, analysed, _memory(40), flat, size=40, resamples=100)["fit"]
    assert (
        fit["fitted"] and isinstance(fit["projection"], str) and fit["projection"].startswith("not projected")
    )

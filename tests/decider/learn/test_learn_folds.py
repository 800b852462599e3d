"""Folds: no group in two places, the compile split apart from every evaluation fold, determinism by seed."""

from __future__ import annotations

import pytest
from _learn_fixtures import unit

from ouroboros_gates.decider.learn.errors import LearnError
from ouroboros_gates.decider.learn.folds import Fold, FoldPlan, assert_disjoint, plan_folds


def _units() -> list:  # type: ignore[type-arg]
    out = []
    for g in range(60):
        family = ["sql_injection", "xss", "path_traversal"][g % 3]
        frameworks = ("flask",) if g % 4 == 0 else ("django",) if g % 7 == 0 else ()
        source = "a" if g % 2 else "b"
        for y in (0, 1):
            out.append(unit(f"repo/{g}", family, y, source=source, frameworks=frameworks, n=g))
    return out


def test_no_group_in_two_places() -> None:
    units = _units()
    plan = plan_folds(units, seed=7)
    places: dict[str, list[str]] = {}
    for g in plan.compile_boot:
        places.setdefault(g, []).append("C_boot")
    for g in plan.compile_val:
        places.setdefault(g, []).append("C_val")
    for fold in plan.outer:
        for g in fold.eval_groups:
            places.setdefault(g, []).append(fold.name)
    assert all(len(p) == 1 for p in places.values()), {g: p for g, p in places.items() if len(p) > 1}
    assert set(places) == {u.group for u in units}
    assert len(plan.compile_groups) == 15  # 25% of 60
    for fold in (*plan.by_source, *plan.by_framework):
        assert not fold.eval_groups & plan.compile_groups
    sizes = sorted(len(f.eval_groups) for f in plan.outer)
    assert sizes[-1] - sizes[0] <= 1 and len(plan.outer) == 5
    # stratified: each fold holds each family
    fam = {u.group: u.family for u in units}
    assert all(len({fam[g] for g in f.eval_groups}) == 3 for f in plan.outer)


def test_framework_below_floor_is_insufficient_data() -> None:
    plan = plan_folds(_units(), seed=7)
    by_name = {f.name: f for f in plan.by_framework}
    assert (
        by_name["framework-flask"].insufficient is None and len(by_name["framework-flask"].eval_groups) >= 10
    )
    assert by_name["framework-django"].insufficient is not None
    assert by_name["framework-django"].insufficient.startswith("insufficient data (")
    assert {f.name for f in plan.by_source} == {"source-a", "source-b"}


def test_determinism_by_seed() -> None:
    a, b, c = plan_folds(_units(), seed=7), plan_folds(_units(), seed=7), plan_folds(_units(), seed=8)
    assert a.digest == b.digest and a.digest != c.digest


def test_overlap_is_refused_naming_the_group() -> None:
    plan = FoldPlan(
        seed=0,
        compile_boot=frozenset({"x/y"}),
        compile_val=frozenset(),
        outer=(Fold("outer-1", "outer", frozenset({"x/y"})),),
    )
    with pytest.raises(LearnError, match="'x/y' is in outer-1 and in compile split"):
        assert_disjoint(plan)

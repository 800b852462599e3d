"""Folds by repository group: the compile split, outer K-fold, leave-one-source-out, leave-one-framework-out.

Every split assigns whole groups. The compile split ``C`` (25% of groups, seeded, stratified by family)
is never evaluated; inside it, 60% of groups are ``C_boot`` (demonstrations) and 40% ``C_val``
(scoring). The outer folds are K = 5 over the groups outside ``C``, stratified by family and label, one
repetition. A fold's memory is every group outside the fold, ``C`` included.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ouroboros_gates.decider.learn.errors import LearnError
from ouroboros_gates.decider.learn.labels import LabelledUnit

__all__ = [
    "FRAMEWORK_FLOOR",
    "Fold",
    "FoldPlan",
    "assert_disjoint",
    "compile_split",
    "group_strata",
    "leave_one_framework_out",
    "leave_one_source_out",
    "outer_folds",
    "plan_folds",
    "seeded_order",
]

FRAMEWORK_FLOOR = 10


@dataclass(frozen=True)
class Fold:
    """Groups evaluated together; ``insufficient`` says why a fold is not evaluated (no number)."""

    name: str
    kind: str
    eval_groups: frozenset[str]
    insufficient: str | None = None


@dataclass(frozen=True)
class FoldPlan:
    """Every split of one label set, with a digest that pins it."""

    seed: int
    compile_boot: frozenset[str]
    compile_val: frozenset[str]
    outer: tuple[Fold, ...]
    by_source: tuple[Fold, ...] = ()
    by_framework: tuple[Fold, ...] = field(default=())

    @property
    def compile_groups(self) -> frozenset[str]:
        """``C``: the compile split, never evaluated."""
        return self.compile_boot | self.compile_val

    @property
    def digest(self) -> str:
        """sha256 over the sorted assignment."""
        doc = {
            "seed": self.seed,
            "boot": sorted(self.compile_boot),
            "val": sorted(self.compile_val),
            "folds": [
                [f.kind, f.name, sorted(f.eval_groups), f.insufficient]
                for f in (*self.outer, *self.by_source, *self.by_framework)
            ],
        }
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def seeded_order(items: Iterable[str], seed: int, salt: str = "") -> list[str]:
    """A seeded shuffle that does not depend on the Python version: sort by sha256(seed, salt, item)."""
    return sorted(items, key=lambda x: hashlib.sha256(f"{seed}\0{salt}\0{x}".encode()).hexdigest())


def group_strata(units: Iterable[LabelledUnit]) -> dict[str, str]:
    """Each group's stratum: its most frequent family and which labels it holds."""
    families: dict[str, Counter[str]] = defaultdict(Counter)
    labels: dict[str, set[int]] = defaultdict(set)
    for u in units:
        families[u.group][u.family] += 1
        labels[u.group].add(u.y)
    return {group: _stratum(counts, labels[group]) for group, counts in families.items()}


def _stratum(counts: Counter[str], labels: set[int]) -> str:
    """``family|labels``: the most frequent family (ties by name) and the labels held, e.g. ``xss|01``."""
    family = min(counts, key=lambda f: (-counts[f], f))
    return f"{family}|{''.join(str(y) for y in sorted(labels))}"


def _deal(strata: dict[str, str], k: int, seed: int, salt: str) -> list[set[str]]:
    """Deal groups into ``k`` bins stratum by stratum, continuing the round-robin across strata."""
    bins: list[set[str]] = [set() for _ in range(k)]
    by_stratum = _groups_by_stratum(strata)
    turn = 0
    for stratum in sorted(by_stratum):
        for group in seeded_order(by_stratum[stratum], seed, salt + stratum):
            bins[turn % k].add(group)
            turn += 1
    return bins


def _groups_by_stratum(strata: dict[str, str]) -> dict[str, list[str]]:
    """The groups of each stratum."""
    by_stratum: dict[str, list[str]] = defaultdict(list)
    for group, stratum in strata.items():
        by_stratum[stratum].append(group)
    return by_stratum


def _groups_by_family(strata: dict[str, str]) -> dict[str, list[str]]:
    """The groups of each family (a stratum's family, whatever its labels)."""
    by_family: dict[str, list[str]] = defaultdict(list)
    for group, stratum in strata.items():
        by_family[stratum.split("|")[0]].append(group)
    return by_family


def compile_split(
    strata: dict[str, str],
    seed: int,
    share: float = 0.25,
    boot_share: float = 0.6,
) -> tuple[frozenset[str], frozenset[str]]:
    """``(C_boot, C_val)``: ``share`` of the groups per family stratum, then ``boot_share`` of them to
    C_boot."""
    chosen: list[str] = []
    by_family = _groups_by_family(strata)
    for family in sorted(by_family):
        groups = seeded_order(by_family[family], seed, "compile" + family)
        chosen += groups[: round(share * len(groups))]
    ordered = seeded_order(chosen, seed, "boot")
    cut = round(boot_share * len(ordered))
    return frozenset(ordered[:cut]), frozenset(ordered[cut:])


def outer_folds(strata: dict[str, str], exclude: frozenset[str], seed: int, k: int = 5) -> tuple[Fold, ...]:
    """Grouped K-fold over the groups outside ``exclude``, stratified by family and label."""
    kept = {g: s for g, s in strata.items() if g not in exclude}
    return tuple(
        Fold(f"outer-{i + 1}", "outer", frozenset(b)) for i, b in enumerate(_deal(kept, k, seed, "outer"))
    )


def leave_one_source_out(units: Sequence[LabelledUnit], exclude: frozenset[str]) -> tuple[Fold, ...]:
    """One fold per source: every group with a unit of that source (outside ``C``)."""
    by_source: dict[str, set[str]] = defaultdict(set)
    for u in _outside(units, exclude):
        by_source[u.source].add(u.group)
    if len(by_source) < 2:
        return tuple(
            Fold(f"source-{s}", "source", frozenset(), "insufficient data (one source)") for s in by_source
        )
    return tuple(Fold(f"source-{s}", "source", frozenset(g)) for s, g in sorted(by_source.items()))


def leave_one_framework_out(units: Sequence[LabelledUnit], exclude: frozenset[str]) -> tuple[Fold, ...]:
    """One fold per framework; below ``FRAMEWORK_FLOOR`` groups it says "insufficient data (n groups)"."""
    by_framework: dict[str, set[str]] = defaultdict(set)
    for u in _outside(units, exclude):
        for framework in u.frameworks:
            by_framework[framework].add(u.group)
    return tuple(_framework_fold(f, g) for f, g in sorted(by_framework.items()))


def _outside(units: Sequence[LabelledUnit], exclude: frozenset[str]) -> list[LabelledUnit]:
    """The units of the groups not excluded."""
    return [u for u in units if u.group not in exclude]


def _framework_fold(framework: str, groups: set[str]) -> Fold:
    """A framework's fold, or why it has none (fewer than ``FRAMEWORK_FLOOR`` groups)."""
    if len(groups) >= FRAMEWORK_FLOOR:
        return Fold(f"framework-{framework}", "framework", frozenset(groups))
    return Fold(
        f"framework-{framework}", "framework", frozenset(), f"insufficient data ({len(groups)} groups)"
    )


def assert_disjoint(plan: FoldPlan) -> None:
    """No group in two outer folds, and no evaluated group in the compile split; names the group."""
    if plan.compile_boot & plan.compile_val:
        raise LearnError(f"group {sorted(plan.compile_boot & plan.compile_val)[0]!r} is in C_boot and C_val")
    _check_outer(plan)
    for fold in (*plan.by_source, *plan.by_framework):
        clash = fold.eval_groups & plan.compile_groups
        if clash:
            raise LearnError(f"group {sorted(clash)[0]!r} is in {fold.name} and in the compile split")


def _check_outer(plan: FoldPlan) -> None:
    """No group in two outer folds, nor in an outer fold and the compile split."""
    seen: dict[str, str] = {g: "compile split" for g in plan.compile_groups}
    for fold in plan.outer:
        for group in fold.eval_groups:
            if group in seen:
                raise LearnError(f"group {group!r} is in {fold.name} and in {seen[group]}")
            seen[group] = fold.name


def plan_folds(
    units: Sequence[LabelledUnit],
    seed: int,
    *,
    k: int = 5,
    compile_share: float = 0.25,
    boot_share: float = 0.6,
) -> FoldPlan:
    """The whole plan for one label set, checked disjoint."""
    strata = group_strata(units)
    boot, val = compile_split(strata, seed, compile_share, boot_share)
    c = boot | val
    plan = FoldPlan(
        seed=seed,
        compile_boot=boot,
        compile_val=val,
        outer=outer_folds(strata, c, seed, k),
        by_source=leave_one_source_out(units, c),
        by_framework=leave_one_framework_out(units, c),
    )
    assert_disjoint(plan)
    return plan

"""The demonstrations of a compile (docs/decider.md, "Compile", step 2): which bootstrap answers may teach,
the seeded sets of three drawn from them, and an alternate of another framework per demonstration."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ouroboros_gates.decider.analyse import Analysed
from ouroboros_gates.decider.decide import Decided
from ouroboros_gates.decider.learn.folds import seeded_order
from ouroboros_gates.decider.learn.groups import ADVISORY
from ouroboros_gates.decider.learn.labels import LabelledUnit
from ouroboros_gates.decider.program import Demo, render_signals

__all__ = ["Candidate", "alternates", "demonstrates", "demonstration", "draw_sets", "identity_free"]

Candidate = tuple[LabelledUnit, Demo]
"""A bootstrap answer kept as a demonstration, with the unit it answered."""


def identity_free(text: str, unit: LabelledUnit) -> bool:
    """Whether a rationale names no repository, owner, path or advisory id of its unit."""
    lowered = text.lower()
    names = [unit.repo, *unit.repo.split("/"), unit.source_ref, "module."]
    if any(n and len(n) >= 4 and n.lower() in lowered for n in names):
        return False
    return ADVISORY.search(text) is None


def demonstration(unit: LabelledUnit, item: Analysed, d: Decided) -> Demo:
    """The demonstration a kept answer becomes: the excerpt it saw, its signals, the label and its reasons."""
    verdict: Literal["vulnerable", "not_vulnerable"] = "vulnerable" if unit.y else "not_vulnerable"
    signals = render_signals(item.record.x, item.record.instruments)
    return Demo(
        example_id=unit.uid,
        code=d.excerpt.text,
        signals=signals,
        roles=tuple(item.roles),
        family=unit.family,
        verdict=verdict,
        rationale=d.decision.rationale,
        cited_lines=tuple(d.decision.cited_lines),
    )


def _confidence(d: Decided) -> float:
    """The confidence of an answer in its own verdict."""
    s = d.raw_score or 0.5
    return s if d.decision.verdict == "vulnerable" else 1 - s


def demonstrates(unit: LabelledUnit, d: Decided, min_confidence: float) -> bool:
    """Whether a bootstrap answer may be a demonstration: right, confident, citing and naming no identity."""
    verdict = d.decision.verdict
    return (
        (verdict == "vulnerable") == bool(unit.y)
        and verdict != "unsure"
        and _confidence(d) >= min_confidence
        and bool(d.decision.cited_lines)
        and identity_free(d.decision.rationale, unit)
    )


def draw_sets(pool: Sequence[Candidate], seed: int, count: int, size: int) -> list[list[Candidate]]:
    """Up to ``count`` disjoint sets of ``size`` from the pool, dealt in a seeded order."""
    ordered = _in_seeded_order(pool, seed)
    sets: list[list[Candidate]] = []
    used: set[str] = set()
    for _ in range(count):
        chosen = _next_set(ordered, used, size)
        if chosen is None:
            break
        used |= {u.uid for u, _ in chosen}
        sets.append(chosen)
    return sets


def _in_seeded_order(pool: Sequence[Candidate], seed: int) -> list[Candidate]:
    """The pool in the seeded order of its units' ids."""
    order = seeded_order([u.uid for u, _ in pool], seed, "demos")
    return [pool_item for uid in order for pool_item in pool if pool_item[0].uid == uid]


def _next_set(ordered: Sequence[Candidate], used: set[str], size: int) -> list[Candidate] | None:
    """One positive, one negative and ``size - 2`` of either, none used before; None when a kind runs out."""
    unused = _unused(ordered, used)
    pos, neg = _first_of(unused, 1), _first_of(unused, 0)
    if pos is None or neg is None:
        return None
    chosen = [pos, neg]
    return chosen + [p for p in unused if p not in chosen][: size - 2]


def _unused(ordered: Sequence[Candidate], used: set[str]) -> list[Candidate]:
    """The candidates no set has used yet, in order."""
    return [p for p in ordered if p[0].uid not in used]


def _first_of(ordered: Sequence[Candidate], y: int) -> Candidate | None:
    return next((p for p in ordered if p[0].y == y), None)


def alternates(sets: Sequence[Sequence[Candidate]], pool: Sequence[Candidate]) -> dict[str, str | None]:
    """For each demonstration, the first unit of the pool with its label and no framework in common."""
    out: dict[str, str | None] = {}
    for chosen in sets:
        for unit, _ in chosen:
            out[unit.uid] = _alternate(unit, pool)
    return out


def _alternate(unit: LabelledUnit, pool: Sequence[Candidate]) -> str | None:
    """The first other unit of the pool with the same label and none of this unit's frameworks."""
    return next(
        (
            u.uid
            for u, _ in pool
            if u.y == unit.y and u.uid != unit.uid and not set(u.frameworks) & set(unit.frameworks)
        ),
        None,
    )

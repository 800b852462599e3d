"""Join plans: the order in which a rule's body is evaluated.

The order is greedy. A semi-naive variant starts with the atom read from the delta (the facts new
in the last round), a plain evaluation with the most selective atom. Then, repeatedly, the next
atom is the one with the most arguments already known (all known: a membership test; some: an
index lookup), ties going to the smaller relation. Negations and comparisons are placed as soon as
their variables are bound, so they prune before the next join rather than after the last one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ouroboros_gates.miners.datalog.check import CheckedRule
from ouroboros_gates.miners.datalog.syntax import Atom, Comparison, Constant, Negation, Variable

__all__ = ["Join", "Plan", "Step", "Test", "plan_rule"]


@dataclass(frozen=True, slots=True)
class Join:
    """A positive atom; ``bound`` lists the argument positions known before it is read."""

    position: int
    atom: Atom
    bound: tuple[int, ...]
    delta: bool


@dataclass(frozen=True, slots=True)
class Test:
    """A negation or comparison, every variable of which is bound when it runs."""

    literal: Negation | Comparison


Step = Join | Test


@dataclass(frozen=True, slots=True)
class Plan:
    """The steps of one rule; ``delta`` is the body position read from the delta, if any."""

    rule: CheckedRule
    delta: int | None
    steps: tuple[Step, ...]


def _bound_positions(atom: Atom, bound: set[str]) -> tuple[int, ...]:
    return tuple(
        position
        for position, term in enumerate(atom.terms)
        if isinstance(term, Constant) or (isinstance(term, Variable) and term.name in bound)
    )


def _rank(atom: Atom, position: int, bound: set[str], sizes: Mapping[str, int]) -> tuple[bool, int, int, int]:
    """Higher is better: fully bound, then most bound arguments, then smallest, then written first."""
    known = len(_bound_positions(atom, bound))
    return known == atom.arity, known, -sizes.get(atom.predicate, 0), -position


def _ready(tests: list[Negation | Comparison], bound: set[str]) -> list[Test]:
    """Take out of ``tests`` those whose variables are all bound, in written order."""
    ready = [test for test in tests if all(name in bound for name in test.variables())]
    for test in ready:
        tests.remove(test)
    return [Test(test) for test in ready]


def plan_rule(rule: CheckedRule, delta: int | None, sizes: Mapping[str, int]) -> Plan:
    """The plan of ``rule``, reading body position ``delta`` from the delta when it is given;
    ``sizes`` are the relations' current sizes."""
    atoms = {position: lit for position, lit in enumerate(rule.body) if isinstance(lit, Atom)}
    tests = [lit for lit in rule.body if not isinstance(lit, Atom)]
    bound: set[str] = set()
    steps: list[Step] = list(_ready(tests, bound))
    first = [] if delta is None else [delta]
    while atoms:
        if first:
            chosen = first.pop()
        else:
            chosen = max(atoms, key=lambda position: _rank(atoms[position], position, bound, sizes))
        atom = atoms.pop(chosen)
        steps.append(Join(chosen, atom, _bound_positions(atom, bound), chosen == delta))
        bound.update(atom.variables())
        steps += _ready(tests, bound)
    return Plan(rule, delta, tuple(steps))

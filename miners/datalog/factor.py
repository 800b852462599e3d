"""Joins factored out of recursive rules before evaluation, and the way back from a factored derivation to
the rule as written.

In a recursive rule of three or more positive atoms, a variable that exactly two of them share, and that
nothing else of the rule reads (the head, another atom, a negation, a comparison), is joined away: the two
atoms become a hidden relation of their variables the rest of the rule still reads. On the points-to
analysis,

    pointsTo(To, P) :- load(To, Base), pointsTo(Base, O), heapPointsTo(O, P).

is evaluated as

    ~0(To, O) :- load(To, Base), pointsTo(Base, O).           (hidden)
    pointsTo(To, P) :- ~0(To, O), heapPointsTo(O, P).

A new ``heapPointsTo(O, P)`` then meets the ``To`` of each ``(To, O)`` once, where the written rule walked
every ``Base`` pointing to ``O`` and kept the few that are loaded (80 million steps for 9 million results on
the benchmark's largest case): the hidden relation is the join done once and kept, as semi-naive evaluation
keeps every relation. Only recursive strata are factored: a rule evaluated once gains nothing from keeping
a join, and could pay for materialising one its plan would have cut short.

A hidden predicate's name (``~N``) cannot be written in the dialect, so it meets no user's predicate; the
model hides its facts. A factored rule keeps the index of the rule it stands for, and every factored-out
rule records the variables its join bound, so a derivation's binding is the rule's binding joined with its
hidden premises' bindings, from which the proof shows the rule as written.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ouroboros_gates.miners.datalog.check import CheckedProgram, CheckedRule
from ouroboros_gates.miners.datalog.strata import Stratum, stratify
from ouroboros_gates.miners.datalog.syntax import Atom, Literal, Rule, Variable

__all__ = ["Evaluation", "factor"]

MIN_ATOMS = 3
"""Rules with fewer positive atoms are joined as written: a join of two is already one lookup per row."""


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The rules evaluation runs: the program's own (index for index, a factored one in place of the rule it
    stands for) and then the factored-out ones; their strata; the rule each factored-out one came from."""

    rules: tuple[CheckedRule, ...]
    strata: tuple[Stratum, ...]
    origin: tuple[int, ...]
    hidden: frozenset[str]


def factor(checked: CheckedProgram) -> Evaluation:
    """The evaluation of ``checked``: its recursive rules factored (the rest as they are)."""
    rules = list(checked.rules)
    origin = list(range(len(rules)))
    for index in _recursive_rules(checked):
        rules[index] = _factored(rules[index], index, rules, origin)
    if len(rules) == len(checked.rules):
        return Evaluation(checked.rules, checked.strata, tuple(origin), frozenset())
    names = frozenset(rule.rule.head.predicate for rule in rules[len(checked.rules) :])
    strata = stratify([*checked.arities, *sorted(names)], [rule.rule for rule in rules])
    return Evaluation(tuple(rules), strata, tuple(origin), names)


def _recursive_rules(checked: CheckedProgram) -> list[int]:
    """The indexes of the rules of recursive strata, in order."""
    return sorted({index for stratum in checked.strata if stratum.recursive for index in stratum.rules})


def _factored(rule: CheckedRule, index: int, rules: list[CheckedRule], origin: list[int]) -> CheckedRule:
    """Rule ``index`` with every eliminable variable factored out; each hidden rule is appended to
    ``rules``, its origin (``index``) to ``origin``."""
    while (pair := _eliminable(rule)) is not None:
        hidden = _hidden_rule(rule, pair, len(rules))
        rules.append(hidden)
        origin.append(index)
        rule = _with_hidden(rule, pair, hidden)
    return rule


def _positions(body: Sequence[Literal]) -> list[int]:
    return [position for position, literal in enumerate(body) if isinstance(literal, Atom)]


def _eliminable(rule: CheckedRule) -> tuple[int, int, str] | None:
    """Two atom positions and the variable only they share and nothing else reads, if a rule of at least
    ``MIN_ATOMS`` positive atoms has one (the first such variable, in written order)."""
    atoms = _positions(rule.body)
    if len(atoms) < MIN_ATOMS:
        return None
    outside = _read_outside_atoms(rule)
    for name, held in _holders(rule, atoms).items():
        if len(held) == 2 and name not in outside:
            return held[0], held[1], name
    return None


def _read_outside_atoms(rule: CheckedRule) -> set[str]:
    """The variables the head and the body's negations and comparisons read."""
    outside = set(rule.rule.head.variables())
    for literal in rule.body:
        if not isinstance(literal, Atom):
            outside.update(literal.variables())
    return outside


def _holders(rule: CheckedRule, atoms: list[int]) -> dict[str, list[int]]:
    """Each variable of the positive atoms with the positions of the atoms that hold it, in order."""
    holders: dict[str, list[int]] = {}
    for position in atoms:
        for name in dict.fromkeys(_atom(rule, position).variables()):
            holders.setdefault(name, []).append(position)
    return holders


def _atom(rule: CheckedRule, position: int) -> Atom:
    literal = rule.body[position]
    assert isinstance(literal, Atom)
    return literal


def _hidden_rule(rule: CheckedRule, pair: tuple[int, int, str], index: int) -> CheckedRule:
    """``~index(kept…) :- A, B.``: the kept variables are those of A and B the rest of the rule reads."""
    first, second, _name = pair
    joined = (_atom(rule, first), _atom(rule, second))
    rest = set(rule.rule.head.variables())
    rest.update(_variables(lit for position, lit in enumerate(rule.body) if position not in (first, second)))
    kept = [name for name in _variables(joined) if name in rest]
    where = rule.rule.location
    head = Atom(f"~{index}", tuple(Variable(name) for name in kept), where)
    return CheckedRule.of(Rule(index, head, joined, where), joined)


def _variables(literals: Iterable[Literal]) -> dict[str, None]:
    """The variables the literals name, each once, in order of first appearance."""
    return dict.fromkeys(name for literal in literals for name in literal.variables())


def _with_hidden(rule: CheckedRule, pair: tuple[int, int, str], hidden: CheckedRule) -> CheckedRule:
    """``rule`` with the two atoms replaced by the hidden one (where the first stood)."""
    first, second, _name = pair
    body = tuple(
        hidden.rule.head if position == first else literal
        for position, literal in enumerate(rule.body)
        if position != second
    )
    return CheckedRule.of(Rule(rule.rule.index, rule.rule.head, body, rule.rule.location), body)

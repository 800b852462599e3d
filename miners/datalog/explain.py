"""Why an atom holds, or why it does not (Soufflé's ``explain``, ``ouro datalog explain``).

An atom the model holds is explained by its proof tree, the one ``Model.proof`` builds for the miners'
findings too. For one it does not hold, each rule whose head matches the atom is tried against the model as
far as it can be cheaply: the body literals in written order (a negation or comparison as soon as its
variables are bound), every binding the model's facts allow, until one literal fails for every binding. The
binding that got furthest is the nearest candidate: the literals it met, and the one that fails it. The search
stops after ``budget`` steps and says so; a predicate no rule derives is explained by the input alone.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ouroboros_gates.miners.datalog.check import CheckedRule
from ouroboros_gates.miners.datalog.model import GroundAtom, Model, ProofNode
from ouroboros_gates.miners.datalog.syntax import (
    Atom,
    Comparison,
    Constant,
    Literal,
    Negation,
    Rule,
    Term,
    Value,
    format_value,
)

__all__ = ["Attempt", "WhyNot", "explain"]

BUDGET = 200_000
"""Bindings tried per rule before the search for the nearest candidate gives up (and says so)."""

Binding = dict[str, Value]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One rule tried on the atom: the literals the nearest candidate binding met (as they held, ground),
    the literal that fails it (written with that binding), and whether the search was cut short."""

    rule: Rule
    met: tuple[str, ...]
    failing: str
    tried: int
    exhausted: bool

    def __str__(self) -> str:
        lines = [f"rule {self.rule.index} at {self.rule.location}: {self.rule}"]
        lines += [f"  {literal}  holds" for literal in self.met]
        searched = f"search cut short after {self.tried} steps" if self.exhausted else f"{self.tried} steps"
        lines.append(f"  {self.failing}  fails  (the nearest candidate binding; {searched})")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class WhyNot:
    """Why an atom does not hold: no rule derives its predicate, no rule's head matches it, or, for each rule
    whose head matches, the nearest candidate binding and the literal that fails it."""

    atom: GroundAtom
    reason: str
    attempts: tuple[Attempt, ...] = field(default=())

    def __str__(self) -> str:
        return "\n".join([f"{self.atom} does not hold: {self.reason}", *map(str, self.attempts)])


def explain(
    model: Model, rules: Sequence[CheckedRule], atom: GroundAtom, budget: int = BUDGET
) -> ProofNode | WhyNot:
    """The proof of ``atom``, or why it does not hold (``rules``: the checked program's, as written)."""
    if atom in model:
        return model.proof(atom.predicate, atom.args)
    deriving = _deriving(rules, atom.predicate)
    if not deriving:
        return WhyNot(atom, f"no rule derives {atom.predicate}, and it is not among the input facts")
    matching = _matching(deriving, atom)
    if not matching:
        return _no_head_matches(atom, deriving)
    search = _Search(model, budget)
    attempts = tuple(search.attempt(rule, binding) for rule, binding in matching)
    return WhyNot(atom, "every rule whose head matches fails on a body literal:", attempts)


def _deriving(rules: Sequence[CheckedRule], predicate: str) -> list[CheckedRule]:
    return [rule for rule in rules if rule.rule.head.predicate == predicate]


def _matching(deriving: list[CheckedRule], atom: GroundAtom) -> list[tuple[CheckedRule, Binding]]:
    """The rules whose head matches the atom, each with the binding that makes it so."""
    return [(rule, b) for rule in deriving if (b := _unify(rule.rule.head.terms, atom.args, {})) is not None]


def _no_head_matches(atom: GroundAtom, deriving: list[CheckedRule]) -> WhyNot:
    heads = "; ".join(str(rule.rule.head) for rule in deriving)
    return WhyNot(atom, f"no rule derives it: no rule's head matches it ({heads})")


def _unify(terms: Sequence[Term], values: Sequence[Value], binding: Binding) -> Binding | None:
    extended = dict(binding)
    for term, value in zip(terms, values, strict=True):
        if not _unify_term(term, value, extended):
            return None
    return extended


def _unify_term(term: Term, value: Value, extended: dict[str, Value]) -> bool:
    """Whether ``term`` matches ``value``; a variable met for the first time is bound in ``extended``."""
    if isinstance(term, Constant):
        return _same(term.value, value)
    if term.anonymous:
        return True
    if term.name in extended:
        return _same(extended[term.name], value)
    extended[term.name] = value
    return True


def _same(left: Value, right: Value) -> bool:
    """Equal as constants of the dialect: ``1`` and ``1.0`` are one number, ``"1"`` is not."""
    return isinstance(left, str) == isinstance(right, str) and left == right


def _ordered(body: Sequence[Literal]) -> list[Literal]:
    """The positive atoms in written order, each negation or comparison right after its variables
    are bound."""
    waiting: list[Literal] = [literal for literal in body if not isinstance(literal, Atom)]
    ordered: list[Literal] = []
    bound: set[str] = set()
    for atom in [literal for literal in body if isinstance(literal, Atom)]:
        ready, waiting = _partition(waiting, bound)
        ordered += [*ready, atom]
        bound.update(atom.variables())
    ready, waiting = _partition(waiting, bound)
    return ordered + ready + waiting


def _partition(tests: list[Literal], bound: set[str]) -> tuple[list[Literal], list[Literal]]:
    """The tests whose variables are all bound, and the others."""
    ready = [test for test in tests if set(test.variables()) <= bound]
    return ready, [test for test in tests if test not in ready]


def _written(literal: Literal, binding: Mapping[str, Value]) -> str:
    """The literal with its bound variables replaced by their values."""

    def term(t: Term) -> str:
        if isinstance(t, Constant):
            return format_value(t.value)
        return (
            format_value(binding[t.name])
            if t.name in binding
            else ("_" if t.name.startswith("_") else t.name)
        )

    if isinstance(literal, Comparison):
        return f"{literal.builtin}({term(literal.left)}, {term(literal.right)})"
    atom = literal.atom if isinstance(literal, Negation) else literal
    text = f"{atom.predicate}({', '.join(map(term, atom.terms))})"
    return f"!{text}" if isinstance(literal, Negation) else text


class _Search:
    """Depth-first over one rule's body; remembers the binding that got furthest. Indexes of the model's
    relations on the bound positions are built when first needed and kept for the next rule."""

    def __init__(self, model: Model, budget: int) -> None:
        self.model = model
        self.budget = budget
        self.indexes: dict[tuple[str, tuple[int, ...]], dict[tuple[Value, ...], list[tuple[Value, ...]]]] = {}

    def attempt(self, rule: CheckedRule, start: Binding) -> Attempt:
        literals = _ordered(rule.body)
        best: tuple[int, Binding] = (0, start)
        tried = 0
        stack: list[tuple[int, Binding]] = [(0, start)]
        while stack and tried < self.budget:
            position, binding = stack.pop()
            tried += 1
            if position > best[0]:
                best = (position, binding)
            extended = list(self.extend(literals[position], binding)) if position < len(literals) else []
            stack.extend((position + 1, b) for b in reversed(extended))
        return _attempt(rule, literals, *best, tried, bool(stack))

    def extend(self, literal: Literal, binding: Binding) -> Iterator[Binding]:
        """The bindings under which ``literal`` holds, extending ``binding``."""
        if isinstance(literal, Atom):
            yield from self._joined(literal, binding)
        elif self._test_holds(literal, binding):
            yield binding

    def _test_holds(self, literal: Comparison | Negation, binding: Binding) -> bool:
        """Whether a comparison or a negation holds under ``binding``."""
        if isinstance(literal, Comparison):
            left, right = (_value(t, binding) for t in (literal.left, literal.right))
            return _compare(literal.builtin, left, right)
        return not any(True for _ in self.matches(literal.atom, binding))

    def _joined(self, atom: Atom, binding: Binding) -> Iterator[Binding]:
        """``binding`` extended by each fact of the atom it agrees with."""
        for row in self.matches(atom, binding):
            found = _unify(atom.terms, row, binding)
            if found is not None:
                yield found

    def matches(self, atom: Atom, binding: Binding) -> list[tuple[Value, ...]]:
        """The model's facts of ``atom``'s predicate agreeing with it on its constants and bound variables."""
        known = tuple(p for p, t in enumerate(atom.terms) if _is_known(t, binding))
        index = self._index(atom.predicate, known)
        return index.get(tuple(_value(atom.terms[p], binding) for p in known), [])

    def _index(
        self, predicate: str, known: tuple[int, ...]
    ) -> dict[tuple[Value, ...], list[tuple[Value, ...]]]:
        """The facts of ``predicate`` by their values at the positions ``known`` (built once)."""
        index = self.indexes.get((predicate, known))
        if index is None:
            index = self.indexes[(predicate, known)] = {}
            for row in self.model.rows(predicate):
                index.setdefault(tuple(row[p] for p in known), []).append(row)
        return index


def _is_known(term: Term, binding: Binding) -> bool:
    """Whether a term's value is known: a constant, or a variable ``binding`` binds."""
    return isinstance(term, Constant) or (not term.anonymous and term.name in binding)


def _attempt(
    rule: CheckedRule, literals: list[Literal], position: int, binding: Binding, tried: int, exhausted: bool
) -> Attempt:
    """The attempt of the binding that got furthest: the literals it met, and the one it fails on."""
    met = tuple(_written(literal, binding) for literal in literals[:position])
    failing = _written(literals[position], binding) if position < len(literals) else "(the head)"
    return Attempt(rule.rule, met, failing, tried, exhausted)


def _value(term: Term, binding: Mapping[str, Value]) -> Value:
    return term.value if isinstance(term, Constant) else binding[term.name]


_ORDER = {"gt": operator.gt, "ge": operator.ge, "lt": operator.lt, "le": operator.le}


def _compare(builtin: str, left: Value, right: Value) -> bool:
    """A builtin as the engine computes it: ``eq``/``ne`` on the constant, order only within strings or
    within numbers."""
    if builtin in ("eq", "ne"):
        return _same(left, right) == (builtin == "eq")
    if isinstance(left, str) != isinstance(right, str):
        return False
    return bool(_ORDER[builtin](left, right))

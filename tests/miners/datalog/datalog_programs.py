"""Hypothesis strategies for random Datalog programs in the dialect's text, with input facts.

Predicates ``e0..e2`` are extensional; ``p0..p3`` get a level each. A rule for a level-L predicate
reads positively any predicate of level <= L (so recursion and mutual recursion happen) and negates
only predicates below L (so the program is stratified), unless ``stratified=False``. Variables are
drawn from a small pool and constants from a small domain so that joins, negations and comparisons
meet often; body literals are shuffled, since the engine must not care about written order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

from hypothesis import strategies as st

from ouroboros_gates.miners.datalog import BUILTINS, Program, Value, parse
from ouroboros_gates.miners.datalog.syntax import format_value

INTS: tuple[Value, ...] = (0, 1, 2, 3, -1)
STRINGS: tuple[Value, ...] = ("a", "b", 'q"x\\y')
FLOATS: tuple[Value, ...] = (0.5, 2.0, -1.5)
VARIABLES = ("X", "Y", "Z", "W")

InputFact = tuple[str, tuple[Value, ...], object]
T = TypeVar("T")
_CHOICES = ("variable",) * 6 + ("constant",) * 2
_INDEXES = tuple(st.integers(0, most) for most in range(16))
_BOOLEANS = st.booleans()


@dataclass
class Generated:
    """A generated program's text and the input facts to run it on."""

    text: str
    facts: list[InputFact] = field(default_factory=list)

    @cached_property
    def program(self) -> Program:
        return parse(self.text, "gen.dl")


def _pick(draw: st.DrawFn, choices: Sequence[T]) -> T:
    """One of ``choices``, drawn through a prebuilt strategy: building ``st.sampled_from`` afresh
    for each draw costs more than evaluating the program three times."""
    return choices[draw(_INDEXES[len(choices) - 1])]


def _atom(draw: st.DrawFn, predicate: str, terms: list[str]) -> str:
    """The atom's text; a zero-arity atom is written ``p`` or ``p()``, both in the dialect."""
    if not terms and draw(_BOOLEANS):
        return predicate
    return f"{predicate}({', '.join(terms)})"


class _Builder:
    """Draws one program: predicates, levels, facts and rules."""

    def __init__(self, draw: st.DrawFn, values: tuple[Value, ...], stratified: bool) -> None:
        self.draw = draw
        self.values = values
        self.stratified = stratified
        self.arities = {f"e{n}": _pick(draw, (0, 1, 1, 2, 2, 2, 3)) for n in range(draw(st.integers(1, 3)))}
        self.level = dict.fromkeys(self.arities, -1)
        for n in range(draw(st.integers(1, 4))):
            self.arities[f"p{n}"] = _pick(draw, (0, 1, 1, 2, 2))
            self.level[f"p{n}"] = draw(st.integers(0, 2))

    def constant(self) -> str:
        return format_value(_pick(self.draw, self.values))

    def term(self, variables: Sequence[str], anonymous: bool) -> str:
        kind = _pick(self.draw, _CHOICES + (("_",) if anonymous else ()))
        if kind == "variable" and variables:
            return _pick(self.draw, variables)
        return "_" if kind == "_" else self.constant()

    def rows(self, predicate: str, least: int, most: int) -> list[tuple[Value, ...]]:
        arity = self.arities[predicate]
        count = self.draw(st.integers(least, most) if arity else _INDEXES[1])
        return [tuple(_pick(self.draw, self.values) for _ in range(arity)) for _ in range(count)]

    def rule(self, head: str) -> str:
        draw, level = self.draw, self.level[head]
        readable = [p for p in self.arities if self.level[p] <= level]
        negatable = [p for p in self.arities if self.level[p] < level or not self.stratified]
        positives = []
        for _ in range(1 + _pick(draw, (0, 1, 2))):
            predicate = _pick(draw, readable)
            terms = [self.term(VARIABLES, anonymous=True) for _ in range(self.arities[predicate])]
            positives.append((predicate, terms))
        bound = sorted({t for _, terms in positives for t in terms if t in VARIABLES})
        body = [_atom(draw, p, terms) for p, terms in positives]
        for _ in range(_pick(draw, (0, 0, 1, 1, 2)) if negatable else 0):
            predicate = _pick(draw, negatable)
            terms = [self.term(bound, anonymous=True) for _ in range(self.arities[predicate])]
            body.append("!" + _atom(draw, predicate, terms))
        for _ in range(_pick(draw, (0, 0, 1, 1, 2))):
            builtin = _pick(draw, sorted(BUILTINS))
            body.append(f"{builtin}({self.term(bound, False)}, {self.term(bound, False)})")
        head_terms = [self.term(bound, anonymous=False) for _ in range(self.arities[head])]
        return f"{_atom(draw, head, head_terms)} :- {', '.join(draw(st.permutations(body)))}."

    def build(self) -> Generated:
        draw = self.draw
        lines: list[str] = []
        facts: list[InputFact] = []
        for predicate in self.arities:
            extensional = predicate.startswith("e")
            seeded = extensional or draw(st.integers(0, 4)) == 0
            for row in (
                self.rows(predicate, 3 if extensional else 0, 14 if extensional else 2) if seeded else []
            ):
                if draw(_BOOLEANS):
                    lines.append(_atom(draw, predicate, [format_value(v) for v in row]) + ".")
                else:
                    facts.append((predicate, row, ("input", len(facts))))
        for predicate in self.arities:
            if predicate.startswith("p"):
                lines += [self.rule(predicate) for _ in range(draw(st.integers(1, 3)))]
        return Generated("\n".join(draw(st.permutations(lines))) + "\n", facts)


@st.composite
def programs(draw: st.DrawFn, floats: bool = False, stratified: bool = True) -> Generated:
    """A random safe program (stratified unless ``stratified=False``) with input facts; constants
    are ints and strings, and floats too when ``floats``."""
    values = INTS + STRINGS + (FLOATS if floats else ())
    return _Builder(draw, values, stratified).build()

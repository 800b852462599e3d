"""Compile a join plan into a Python function: one nested loop per scanned atom, dictionary
lookups for indexes and membership, and the head written into the round's new facts.

Generated code is the engine's hot path; an interpreter walking the plan per binding costs several
times more. No text from the program reaches the generated source: variables, constants and
relations become positional names (``v0``, ``c0``, ``a0``), and the constants and relations are
passed in as arguments, so the source depends only on the plan's shape.

The function's signature is ``(D, N, F, C, a0, a1, ...)``: the delta being read (unused without
one), the head's new facts, the head's known facts, the constants, and the sources. A derivation
is recorded as ``(rule index, *witness values)`` the first time its head is found.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from ouroboros_gates.miners.datalog.plan import Join, Plan, Test
from ouroboros_gates.miners.datalog.syntax import (
    BUILTINS,
    Atom,
    Comparison,
    Constant,
    Negation,
    Term,
    Variable,
)

__all__ = ["CompiledPlan", "Source", "compile_plan"]


@dataclass(frozen=True, slots=True)
class Source:
    """What a compiled plan reads: a relation's rows (``positions`` is None) or its index on
    ``positions`` (keyed by the value, or by a tuple of values for several positions), holding rows or,
    ``projected``, each row's value at that one other position."""

    predicate: str
    positions: tuple[int, ...] | None
    projected: int | None = None


@dataclass(frozen=True, slots=True)
class CompiledPlan:
    """A plan as a Python function, with the constants and sources it must be called with."""

    function: Callable[..., None]
    head: str
    constants: tuple[object, ...]
    sources: tuple[Source, ...]
    text: str


def compile_plan(plan: Plan, proofs: bool = True) -> CompiledPlan:
    """Generate, compile and return the function that runs ``plan``; without ``proofs`` a derivation is
    the rule index alone, one tuple shared by every fact the plan derives."""
    rule = plan.rule.rule
    name = f"rule_{rule.index}" if plan.delta is None else f"rule_{rule.index}_delta_{plan.delta}"
    compiler = _Compiler(plan, proofs)
    text = compiler.generate(name)
    return CompiledPlan(
        _define(text, name), rule.head.predicate, tuple(compiler.constants), tuple(compiler.sources), text
    )


@lru_cache(maxsize=1024)
def _define(text: str, name: str) -> Callable[..., None]:
    """Compile generated source once per distinct text (mutation tests re-plan the same rules)."""
    namespace: dict[str, Any] = {}
    exec(compile(text, f"<datalog {name}>", "exec"), namespace)
    return cast(Callable[..., None], namespace[name])


def _ordering_guard(left: str, right: str, left_term: Term, right_term: Term) -> str:
    """Order comparisons hold only between two strings or two numbers: a guard for that."""
    if isinstance(left_term, Constant):
        return f"{right}.__class__ {'is' if isinstance(left_term.value, str) else 'is not'} str"
    if isinstance(right_term, Constant):
        return f"{left}.__class__ {'is' if isinstance(right_term.value, str) else 'is not'} str"
    return f"({left}.__class__ is str) == ({right}.__class__ is str)"


class _Compiler:
    """Writes the body of one plan's function, line by line, tracking indentation and names."""

    def __init__(self, plan: Plan, proofs: bool) -> None:
        self.plan = plan
        self.proofs = proofs
        self.lines: list[str] = []
        self.depth = 1
        self.locals: dict[str, str] = {}
        self.constants: list[object] = []
        self.sources: list[Source] = []
        self.pending: list[str] = []
        self.rows: dict[tuple[Term, ...], str] = {}

    def generate(self, name: str) -> str:
        for step in self.plan.steps:
            if isinstance(step, Join):
                self.join(step)
            else:
                self.test(step)
        self.head()
        parameters = ["D", "N", "F", "C", *(f"a{number}" for number in range(len(self.sources)))]
        header = [f"def {name}({', '.join(parameters)}):"]
        if self.constants:
            header.append(f"    {', '.join(f'c{n}' for n in range(len(self.constants)))}, = C")
        return "\n".join(header + self.lines) + "\n"

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def open(self, text: str) -> None:
        self.line(text)
        self.depth += 1

    def flush(self) -> None:
        """Emit the tests gathered since the last join as one ``if``."""
        if self.pending:
            self.open(f"if {' and '.join(self.pending)}:")
            self.pending = []

    def constant(self, value: object) -> str:
        self.constants.append(value)
        return f"c{len(self.constants) - 1}"

    def source(self, predicate: str, positions: tuple[int, ...] | None, projected: int | None = None) -> str:
        source = Source(predicate, positions, projected)
        if source not in self.sources:
            self.sources.append(source)
        return f"a{self.sources.index(source)}"

    def term(self, term: Term) -> str:
        return self.constant(term.value) if isinstance(term, Constant) else self.locals[term.name]

    def key(self, terms: Sequence[Term]) -> str:
        """An index key: the value itself for one position, a tuple for several."""
        return self.term(terms[0]) if len(terms) == 1 else self.row(terms)

    def row(self, terms: Sequence[Term]) -> str:
        parts = [self.term(term) for term in terms]
        return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"

    def join(self, step: Join) -> None:
        self.flush()
        atom, name = step.atom, f"t{step.position}"
        bound = set(step.bound)
        if step.delta:
            self.open(f"for {name} in D:")
            self.bind(atom, name, matched=set(), compared=bound)
        elif len(bound) == atom.arity:
            self.open(f"if {self.row(atom.terms)} in {self.source(atom.predicate, None)}:")
        elif not bound:
            self.open(f"for {name} in {self.source(atom.predicate, None)}:")
            self.bind(atom, name, matched=set(), compared=set())
        else:
            key = self.key([atom.terms[position] for position in step.bound])
            free = [position for position in range(atom.arity) if position not in bound]
            if len(free) == 1:  # one value to bind: the index holds it, not the row
                local = self.locals[cast(Variable, atom.terms[free[0]]).name] = f"v{len(self.locals)}"
                self.open(
                    f"for {local} in {self.source(atom.predicate, step.bound, free[0])}.get({key}, ()):"
                )
                return
            index = self.source(atom.predicate, step.bound)
            self.open(f"for {name} in {index}.get({key}, ()):")
            self.bind(atom, name, matched=bound, compared=set())

    def bind(self, atom: Atom, tuple_name: str, matched: set[int], compared: set[int]) -> None:
        """Check the row against known values and bind its new variables to locals."""
        conditions = [f"{tuple_name}[{p}] == {self.term(atom.terms[p])}" for p in sorted(compared)]
        first: dict[str, int] = {}
        fresh: dict[int, str] = {}
        for position, term in enumerate(atom.terms):
            if position in matched or position in compared:
                continue
            name = cast(Variable, term).name
            if name in first:
                conditions.append(f"{tuple_name}[{position}] == {tuple_name}[{first[name]}]")
                continue
            first[name] = position
            fresh[position] = self.locals[name] = f"v{len(self.locals)}"
        if conditions:
            self.open(f"if {' and '.join(conditions)}:")
        if len(fresh) >= 2:
            self.line(f"{', '.join(fresh.get(p, '_') for p in range(atom.arity))} = {tuple_name}")
        else:
            for position, local in fresh.items():
                self.line(f"{local} = {tuple_name}[{position}]")
        self.rows.setdefault(atom.terms, tuple_name)

    def test(self, step: Test) -> None:
        literal = step.literal
        if isinstance(literal, Comparison):
            left, right = self.term(literal.left), self.term(literal.right)
            test = f"{left} {BUILTINS[literal.builtin]} {right}"
            if literal.builtin not in ("eq", "ne"):
                test = f"{_ordering_guard(left, right, literal.left, literal.right)} and {test}"
            self.pending.append(f"({test})")
        else:
            self.pending.append(self.negation(literal))

    def negation(self, literal: Negation) -> str:
        atom = literal.atom
        known = tuple(p for p, t in enumerate(atom.terms) if not (isinstance(t, Variable) and t.anonymous))
        if len(known) == atom.arity:
            return f"{self.row(atom.terms)} not in {self.source(atom.predicate, None)}"
        if not known:
            return f"not {self.source(atom.predicate, None)}"
        key = self.key([atom.terms[position] for position in known])
        return f"not {self.source(atom.predicate, known)}.get({key})"

    def head(self) -> None:
        self.flush()
        rule = self.plan.rule
        terms = rule.rule.head.terms
        self.line(f"h = {self.rows.get(terms) or self.row(terms)}")
        self.open("if h not in F and h not in N:")
        if not self.proofs:
            self.line(f"N[h] = {self.constant((rule.rule.index,))}")
            return
        witness = [str(rule.rule.index), *(self.locals[name] for name in rule.witnesses)]
        self.line(f"N[h] = ({', '.join(witness)},)")

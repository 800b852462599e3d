"""Run a dialect program in clingo, a peer that shares no code with the engine.

Translation: predicate ``p`` becomes ``d_p`` (clear of ASP keywords), ``!a`` becomes ``not a``,
``eq``/``ne`` become ``=``/``!=``. Clingo orders every integer below every string, whereas the
dialect's order comparisons are false across types; so ``gt(A, B)`` becomes two rules, one with
``A > B, A < ""`` (both integers: only integers sort below the empty string, and B sorts below A)
and one with ``A > B, B >= ""`` (both strings: A sorts above B). Clingo has no floats: programs with floats
are refused.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import clingo

from ouroboros_gates.miners.datalog import Atom, Comparison, Constant, Negation, Program, Term, Value

Database = dict[str, set[tuple[Value, ...]]]

_OPERATORS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}


def _value(value: Value) -> str:
    if isinstance(value, float):
        raise ValueError(f"clingo has no floats: {value!r}")
    if isinstance(value, int):
        return str(value)
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _term(term: Term) -> str:
    return _value(term.value) if isinstance(term, Constant) else term.name


def _atom(predicate: str, terms: Iterable[str]) -> str:
    listed = list(terms)
    return f"d_{predicate}({', '.join(listed)})" if listed else f"d_{predicate}"


def _alternatives(literal: Atom | Negation | Comparison) -> list[str]:
    """The ASP bodies one literal may become (several for an order comparison)."""
    if isinstance(literal, Atom):
        return [_atom(literal.predicate, map(_term, literal.terms))]
    if isinstance(literal, Negation):
        return ["not " + _atom(literal.atom.predicate, map(_term, literal.atom.terms))]
    left, right = _term(literal.left), _term(literal.right)
    if literal.builtin in ("eq", "ne"):
        return [f"{left} {'=' if literal.builtin == 'eq' else '!='} {right}"]
    test = f"{left} {_OPERATORS[literal.builtin]} {right}"
    small, large = (right, left) if literal.builtin in ("gt", "ge") else (left, right)
    return [f'{test}, {large} < ""', f'{test}, {small} >= ""']


def to_asp(program: Program, facts: Iterable[tuple[str, tuple[Value, ...]]]) -> str:
    """The program and the facts as an ASP text."""
    lines = [_atom(f.atom.predicate, map(_term, f.atom.terms)) + "." for f in program.facts]
    lines += [_atom(predicate, map(_value, args)) + "." for predicate, args in facts]
    for rule in program.rules:
        head = _atom(rule.head.predicate, map(_term, rule.head.terms))
        for body in itertools.product(*map(_alternatives, rule.body)):
            lines.append(f"{head} :- {', '.join(body)}.")
    return "\n".join(lines) + "\n"


def _python(symbol: clingo.Symbol) -> Value:
    return symbol.number if symbol.type == clingo.SymbolType.Number else symbol.string


def clingo_model(program: Program, facts: Iterable[tuple[str, tuple[Value, ...]]]) -> Database:
    """The single stable model of a stratified program, by predicate."""
    control = clingo.Control(["--warn=none", "--models=0"])
    control.add("base", [], to_asp(program, facts))
    control.ground([("base", [])])
    models: list[Database] = []

    def keep(model: clingo.Model) -> None:
        database: Database = {}
        for symbol in model.symbols(atoms=True):
            row = tuple(_python(argument) for argument in symbol.arguments)
            database.setdefault(symbol.name.removeprefix("d_"), set()).add(row)
        models.append(database)

    control.solve(on_model=keep)
    assert len(models) == 1, f"a stratified program has exactly one stable model, clingo found {len(models)}"
    return models[0]

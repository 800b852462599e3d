"""Datalog in clingo's language, for the benchmarks that run clingo on our programs and facts
(``benchmarks/datalog.py`` and its whole-process workload, ``benchmarks/_whole.py``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ouroboros_gates.miners.datalog import Atom, Comparison, Negation, Program, Term, Value, Variable

__all__ = ["asp_facts", "asp_value", "to_asp"]

_ASP = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "eq": "=", "ne": "!="}


def asp_value(value: Value) -> str:
    """A constant as clingo reads it; exits on a float that is not whole (clingo has no floats)."""
    if isinstance(value, float):
        if not value.is_integer():
            raise SystemExit(f"clingo has no floats: {value!r} (benchmark void)")
        value = int(value)
    if isinstance(value, int):
        return str(value)
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _term(term: Term) -> str:
    return term.name if isinstance(term, Variable) else asp_value(term.value)


def _atom(atom: Atom) -> str:
    return f"d_{atom.predicate}({', '.join(map(_term, atom.terms))})" if atom.terms else f"d_{atom.predicate}"


def to_asp(program: Program) -> str:
    """The program in clingo's language: ``p`` as ``d_p``, ``!a`` as ``not a``, builtins as operators
    (miners compare numbers with numbers, where both languages agree)."""
    lines = [f"{_atom(fact.atom)}." for fact in program.facts]
    for rule in program.rules:
        body = []
        for literal in rule.body:
            if isinstance(literal, Atom):
                body.append(_atom(literal))
            elif isinstance(literal, Negation):
                body.append(f"not {_atom(literal.atom)}")
            else:
                assert isinstance(literal, Comparison)
                body.append(f"{_term(literal.left)} {_ASP[literal.builtin]} {_term(literal.right)}")
        lines.append(f"{_atom(rule.head)} :- {', '.join(body)}." if body else f"{_atom(rule.head)}.")
    return "\n".join(lines) + "\n"


def asp_facts(facts: Iterable[tuple[str, Sequence[Value]]]) -> str:
    """Input facts as clingo text, one ``d_p(args).`` a line."""
    return "".join(f"d_{predicate}({', '.join(map(asp_value, args))}).\n" for predicate, args in facts)

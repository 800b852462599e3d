"""The abstract syntax of the dialect: terms, literals, rules, facts, declarations and programs.

Every node renders back to source with ``str``, so messages and proofs quote rules as written in
the dialect (whitespace normalised). Numbers form one type: ``1`` and ``1.0`` are the same constant.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = [
    "BUILTINS",
    "Atom",
    "Comparison",
    "Constant",
    "Declaration",
    "Directive",
    "Fact",
    "Literal",
    "Location",
    "Negation",
    "Program",
    "Rule",
    "Term",
    "Value",
    "Variable",
    "format_value",
]

Value = str | int | float
"""A constant: a string, or a number (int or float; equal numbers are the same constant)."""

BUILTINS: dict[str, str] = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "eq": "==", "ne": "!="}
"""The comparison builtins and the Python operator each one means."""

_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"})


def format_value(value: Value) -> str:
    """The source form of a constant: a double-quoted, escaped string or a number."""
    if isinstance(value, str):
        return '"' + value.translate(_ESCAPES) + '"'
    return repr(value)


@dataclass(frozen=True, slots=True)
class Location:
    """Where a node starts in its source: file, 1-based line and 1-based column."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class Variable:
    """A variable; the name ``_`` is anonymous (every occurrence is a fresh variable)."""

    name: str

    @property
    def anonymous(self) -> bool:
        return self.name == "_"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Constant:
    """A constant term."""

    value: Value

    def __str__(self) -> str:
        return format_value(self.value)


Term = Variable | Constant


def _named_variables(terms: tuple[Term, ...]) -> Iterator[str]:
    for term in terms:
        if isinstance(term, Variable) and not term.anonymous:
            yield term.name


@dataclass(frozen=True, slots=True)
class Atom:
    """``predicate(term, ...)``; as a body literal it is positive."""

    predicate: str
    terms: tuple[Term, ...]
    location: Location = field(compare=False)

    @property
    def arity(self) -> int:
        return len(self.terms)

    def variables(self) -> Iterator[str]:
        """Names of the named (non-anonymous) variables, in order, with repeats."""
        return _named_variables(self.terms)

    def __str__(self) -> str:
        return f"{self.predicate}({', '.join(map(str, self.terms))})"


@dataclass(frozen=True, slots=True)
class Negation:
    """``!atom``: holds when no fact matches the atom (its ``_`` positions match anything)."""

    atom: Atom

    @property
    def location(self) -> Location:
        return self.atom.location

    def variables(self) -> Iterator[str]:
        return self.atom.variables()

    def __str__(self) -> str:
        return f"!{self.atom}"


@dataclass(frozen=True, slots=True)
class Comparison:
    """A builtin ``gt ge lt le eq ne`` applied to two terms."""

    builtin: str
    left: Term
    right: Term
    location: Location = field(compare=False)

    def variables(self) -> Iterator[str]:
        return _named_variables((self.left, self.right))

    def __str__(self) -> str:
        return f"{self.builtin}({self.left}, {self.right})"


Literal = Atom | Negation | Comparison


@dataclass(frozen=True, slots=True)
class Rule:
    """``head :- body.``, numbered by its position among the program's rules."""

    index: int
    head: Atom
    body: tuple[Literal, ...]
    location: Location = field(compare=False)

    def __str__(self) -> str:
        if not self.body:
            return f"{self.head}."
        return f"{self.head} :- {', '.join(map(str, self.body))}."


@dataclass(frozen=True, slots=True)
class Fact:
    """A ground clause written in the program; extensional, with the program text as its span."""

    atom: Atom

    @property
    def args(self) -> tuple[Value, ...]:
        return tuple(term.value for term in self.atom.terms if isinstance(term, Constant))

    def __str__(self) -> str:
        return f"{self.atom}."


@dataclass(frozen=True, slots=True)
class Declaration:
    """``.decl predicate(name: type, ...)``: fixes the arity and the type (symbol or number) of each
    argument."""

    predicate: str
    attributes: tuple[tuple[str, str], ...]
    location: Location = field(compare=False)

    @property
    def arity(self) -> int:
        return len(self.attributes)

    def __str__(self) -> str:
        return f".decl {self.predicate}({', '.join(f'{name}: {kind}' for name, kind in self.attributes)})"


@dataclass(frozen=True, slots=True)
class Directive:
    """Soufflé's ``.input P`` (P's facts come from the input) or ``.output P`` (P is what the program is
    run for: ``ouro datalog run`` writes it)."""

    kind: str
    predicate: str
    location: Location = field(compare=False)

    def __str__(self) -> str:
        return f".{self.kind} {self.predicate}"


@dataclass(frozen=True, slots=True)
class Program:
    """A parsed ``.dl`` text: rules, facts, declarations and directives in source order, and the leading
    ``/* predicate */`` comment that says in words what the program derives."""

    file: str
    rules: tuple[Rule, ...]
    facts: tuple[Fact, ...]
    declarations: tuple[Declaration, ...]
    predicate_doc: str | None
    directives: tuple[Directive, ...] = ()

    def directed(self, kind: str) -> tuple[str, ...]:
        """The predicates of the ``.input`` or ``.output`` directives (``kind``), in written order, once
        each."""
        return tuple(dict.fromkeys(d.predicate for d in self.directives if d.kind == kind))

    def __str__(self) -> str:
        lines = [f"/* {self.predicate_doc} */"] if self.predicate_doc is not None else []
        clauses = (*self.declarations, *self.directives, *self.facts, *self.rules)
        lines += [str(clause) for clause in clauses]
        return "\n".join(lines) + "\n"

"""The contract a program must meet before anything is evaluated: consistent arities and declared
types, safe rules, and a stratification. ``check`` turns a ``Program`` into a ``CheckedProgram``.

Safety is order-free: the engine reorders bodies, so a variable is bound when any positive atom of
the rule binds it, wherever that atom is written.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field, replace

from ouroboros_gates.miners.datalog.errors import (
    ArityError,
    ContractError,
    DeclarationError,
    UndefinedPredicateError,
    UnsafeRuleError,
)
from ouroboros_gates.miners.datalog.strata import Stratum, stratify
from ouroboros_gates.miners.datalog.syntax import (
    Atom,
    Comparison,
    Constant,
    Literal,
    Location,
    Negation,
    Program,
    Rule,
    Term,
    Value,
    Variable,
)

__all__ = ["MAX_POSITIVE_ATOMS", "CheckedProgram", "CheckedRule", "check", "check_defined", "value_has_type"]

MAX_POSITIVE_ATOMS = 16
"""Most positive atoms one rule may join: each becomes a nested loop of a compiled Python function,
and CPython refuses more than 20 statically nested blocks."""


@dataclass(frozen=True, slots=True)
class CheckedRule:
    """A safe rule ready to plan: its positive atoms' ``_`` renamed apart (``_1``, ``_2``, ...), and
    the non-head variables whose values a derivation records so its proof can be rebuilt."""

    rule: Rule
    body: tuple[Literal, ...]
    witnesses: tuple[str, ...]

    @classmethod
    def of(cls, rule: Rule, body: tuple[Literal, ...]) -> CheckedRule:
        """``rule`` evaluated as ``body``; its witnesses are the variables of the body's positive atoms
        that the head does not name, in order of first appearance."""
        return cls(rule, body, _witnesses(rule, body))


def _witnesses(rule: Rule, body: tuple[Literal, ...]) -> tuple[str, ...]:
    """The variables of the body's positive atoms the head does not name, in order of first appearance."""
    head_variables = set(rule.head.variables())
    witnesses: dict[str, None] = {}
    for literal in body:
        if isinstance(literal, Atom):
            witnesses.update((name, None) for name in literal.variables() if name not in head_variables)
    return tuple(witnesses)


@dataclass(frozen=True, slots=True)
class CheckedProgram:
    """A program that meets the contract: arities agree, rules are safe, strata are known."""

    program: Program
    rules: tuple[CheckedRule, ...]
    strata: tuple[Stratum, ...]
    arities: Mapping[str, int]
    types: Mapping[str, tuple[str, ...]]
    plans: dict[object, object] = field(
        default_factory=dict, init=False, compare=False, hash=False, repr=False
    )
    """The evaluator's compiled plans of these rules, kept from one evaluation to the next (a miner's
    program is evaluated once per run it mines; planning and compiling cost more than a small run's joins)."""


def check(program: Program) -> CheckedProgram:
    """Check ``program``; raises ``ArityError``, ``DeclarationError``, ``UnsafeRuleError`` or
    ``UnstratifiedError`` (all ``ContractError``) naming the file and line at fault."""
    types = _declared_types(program)
    arities = _arities(program)
    _check_directives(program, arities)
    _check_typed_constants(program, types)
    numbered = _numbered(program)
    rules = tuple(_check_rule(rule) for rule in numbered)
    strata = stratify(list(arities), numbered)
    return CheckedProgram(program, rules, strata, arities, types)


def _check_directives(program: Program, arities: Mapping[str, int]) -> None:
    """``DeclarationError`` at the first directive naming a predicate no rule, fact or ``.decl`` names."""
    for directive in program.directives:
        if directive.predicate not in arities:
            message = f"{directive}: no rule, fact or .decl names {directive.predicate}"
            raise DeclarationError(message, directive.location.file, directive.location.line)


def _check_typed_constants(program: Program, types: Mapping[str, tuple[str, ...]]) -> None:
    """``DeclarationError`` at the first constant of a declared predicate that is not of its type."""
    for atom in _atoms(program):
        if atom.predicate in types:
            _check_constants(atom, types[atom.predicate])


def _numbered(program: Program) -> list[Rule]:
    """The rules, each with its position as its index."""
    # A rule's index is its position, which derivations record; a program assembled by hand (a
    # mutant with a rule dropped, say) may not keep that, so positions are made to agree here.
    return [rule if rule.index == n else replace(rule, index=n) for n, rule in enumerate(program.rules)]


_DOCUMENTED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def check_defined(checked: CheckedProgram, given: Collection[str]) -> None:
    """Raise ``UndefinedPredicateError`` at the first rule that reads a predicate with no source: no
    rule derives it, no fact, ``.decl`` or ``.input`` of the program names it, the ``/* predicate */``
    block does not document it (``name(`` there), and it is not in ``given`` (the predicates of the
    input facts). Not part of ``check``: an input predicate may have no facts in one run, so only a
    caller holding the input knows what is given."""
    program = checked.program
    defined = _defined(program)
    for rule in program.rules:
        for atom in _read_atoms(rule):
            if atom.predicate not in defined and atom.predicate not in given:
                message = (
                    f"{atom.predicate} is defined nowhere (no rule, fact, .decl, /* predicate */ entry or "
                    f"input fact): read in {rule}"
                )
                raise UndefinedPredicateError(message, atom.location.file, atom.location.line)


def _defined(program: Program) -> set[str]:
    """The predicates the program gives a source: its rules' heads, its facts, ``.decl`` and ``.input``
    directives, and the ``/* predicate */`` block's entries."""
    defined = {rule.head.predicate for rule in program.rules}
    defined |= {fact.atom.predicate for fact in program.facts}
    defined |= {declaration.predicate for declaration in program.declarations}
    defined |= set(program.directed("input"))
    defined |= set(_DOCUMENTED.findall(program.predicate_doc or ""))
    return defined


def _read_atoms(rule: Rule) -> Iterator[Atom]:
    """The atoms a rule's body reads, positive or negated."""
    for literal in rule.body:
        atom = literal.atom if isinstance(literal, Negation) else literal
        if isinstance(atom, Atom):
            yield atom


def value_has_type(value: Value, kind: str) -> bool:
    """Whether ``value`` is of the declared type ``kind`` (``symbol`` or ``number``)."""
    return isinstance(value, str) if kind == "symbol" else not isinstance(value, str)


def _atoms(program: Program) -> Iterator[Atom]:
    """Every atom written in the program: facts, heads, positive and negated body atoms."""
    for fact in program.facts:
        yield fact.atom
    for rule in program.rules:
        yield rule.head
        yield from _read_atoms(rule)


def _declared_types(program: Program) -> dict[str, tuple[str, ...]]:
    types: dict[str, tuple[str, ...]] = {}
    where: dict[str, Location] = {}
    for declaration in program.declarations:
        name, location = declaration.predicate, declaration.location
        if name in where:
            message = f"predicate {name} declared twice: at {where[name]} and at {location}"
            raise DeclarationError(message, location.file, location.line)
        where[name] = location
        types[name] = tuple(kind for _attribute, kind in declaration.attributes)
    return types


def _arities(program: Program) -> dict[str, int]:
    """Each predicate's arity, in order of first appearance; two arities are an ``ArityError``."""
    first: dict[str, tuple[int, Location, str]] = {}
    for predicate, arity, location, verb in _arity_uses(program):
        if predicate not in first:
            first[predicate] = (arity, location, verb)
            continue
        known, known_location, known_verb = first[predicate]
        if arity != known:
            message = (
                f"predicate {predicate} {known_verb} with arity {known} at {known_location} "
                f"and {verb} with arity {arity} at {location}"
            )
            raise ArityError(message, location.file, location.line)
    return {predicate: arity for predicate, (arity, _location, _verb) in first.items()}


def _arity_uses(program: Program) -> list[tuple[str, int, Location, str]]:
    """Each predicate's arity where it is declared, then where it is used, with the verb saying which."""
    uses = [(d.predicate, d.arity, d.location, "declared") for d in program.declarations]
    uses += [(atom.predicate, atom.arity, atom.location, "used") for atom in _atoms(program)]
    return uses


def _check_constants(atom: Atom, kinds: tuple[str, ...]) -> None:
    for position, (term, kind) in enumerate(zip(atom.terms, kinds, strict=True), start=1):
        if isinstance(term, Constant) and not value_has_type(term.value, kind):
            message = f"argument {position} of {atom} is {term}, not a {kind} as {atom.predicate} declares"
            raise DeclarationError(message, atom.location.file, atom.location.line)


def _unsafe(rule: Rule, message: str) -> UnsafeRuleError:
    return UnsafeRuleError(f"{message} of {rule}", rule.location.file, rule.location.line)


def _check_rule(rule: Rule) -> CheckedRule:
    positives = _positive_atoms(rule)
    bound = {name for atom in positives for name in atom.variables()}
    _check_head(rule, bound)
    _check_conditions(rule, bound)
    body = _name_anonymous(rule.body)
    return CheckedRule.of(rule, body)


def _positive_atoms(rule: Rule) -> list[Atom]:
    """The rule's positive body atoms; ``ContractError`` past the most the engine joins."""
    positives = [literal for literal in rule.body if isinstance(literal, Atom)]
    if len(positives) > MAX_POSITIVE_ATOMS:
        message = f"{len(positives)} positive atoms in {rule}: the engine joins at most {MAX_POSITIVE_ATOMS}"
        raise ContractError(message, rule.location.file, rule.location.line)
    return positives


def _check_conditions(rule: Rule, bound: set[str]) -> None:
    """Each negation and comparison of the body reads only variables its positive atoms bind."""
    for literal in rule.body:
        if isinstance(literal, Negation):
            _check_negation(rule, literal, bound)
        elif isinstance(literal, Comparison):
            _check_comparison(rule, literal, bound)


def _check_bound(rule: Rule, term: Term, bound: set[str], where: str) -> None:
    """``UnsafeRuleError`` if ``term``, written ``where``, is ``_`` or a variable no positive atom binds."""
    if isinstance(term, Variable) and term.anonymous:
        raise _unsafe(rule, f"anonymous variable '_' in {where}")
    if isinstance(term, Variable) and term.name not in bound:
        raise _unsafe(rule, f"unbound variable {term.name} in {where}")


def _check_head(rule: Rule, bound: set[str]) -> None:
    for term in rule.head.terms:
        _check_bound(rule, term, bound, "head")


def _check_negation(rule: Rule, negation: Negation, bound: set[str]) -> None:
    for name in negation.variables():
        if name not in bound:
            raise _unsafe(rule, f"negation before its variables are bound: {name} in {negation}")


def _check_comparison(rule: Rule, comparison: Comparison, bound: set[str]) -> None:
    for term in (comparison.left, comparison.right):
        _check_bound(rule, term, bound, f"builtin {comparison.builtin}")


def _name_anonymous(body: tuple[Literal, ...]) -> tuple[Literal, ...]:
    """Rename each ``_`` of a positive atom to a fresh ``_1``, ``_2``, ... (no written variable can
    start with ``_``), so the value it matched is recorded like any other variable's."""
    count = 0

    def fresh(term: Term) -> Term:
        nonlocal count
        if not (isinstance(term, Variable) and term.anonymous):
            return term
        count += 1
        return Variable(f"_{count}")

    return tuple(
        Atom(literal.predicate, tuple(map(fresh, literal.terms)), literal.location)
        if isinstance(literal, Atom)
        else literal
        for literal in body
    )

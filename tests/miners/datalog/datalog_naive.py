"""A naive reference evaluator, written independently of the engine: its own stratification (levels
raised until stable), every rule re-run over whole relations until nothing changes, bodies matched
left to right by backtracking, no indexes, no delta. Slow and obviously right."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from ouroboros_gates.miners.datalog import Atom, Comparison, Constant, Negation, Program, Rule, Term, Value

Database = dict[str, set[tuple[Value, ...]]]
Binding = dict[str, Value]


class NotStratified(Exception):
    """The levels never settle: some predicate depends on itself through a negation."""


def compare(builtin: str, left: Value, right: Value) -> bool:
    """The builtins' meaning: strings order among strings, numbers among numbers; eq/ne compare
    value and type (1 and 1.0 are the same number)."""
    same_kind = isinstance(left, str) == isinstance(right, str)
    if builtin == "eq":
        return same_kind and left == right
    if builtin == "ne":
        return not (same_kind and left == right)
    if not same_kind:
        return False
    ordering = {"gt": left > right, "ge": left >= right, "lt": left < right, "le": left <= right}  # type: ignore[operator]
    return ordering[builtin]


def levels(program: Program) -> dict[str, int]:
    """A level per head predicate: at least each positive dependency's, above each negative one's."""
    level: dict[str, int] = {}
    limit = 1 + len({rule.head.predicate for rule in program.rules}) + len(program.rules)
    changed = True
    while changed:
        changed = False
        for rule in program.rules:
            needed = max([_level_needed(literal, level) for literal in rule.body] + [0])
            if needed > level.get(rule.head.predicate, 0):
                level[rule.head.predicate] = needed
                changed = True
                if needed > limit:
                    raise NotStratified(rule.head.predicate)
    return {rule.head.predicate: level.get(rule.head.predicate, 0) for rule in program.rules}


def _level_needed(literal: Atom | Negation | Comparison, level: Mapping[str, int]) -> int:
    if isinstance(literal, Atom):
        return level.get(literal.predicate, 0)
    if isinstance(literal, Negation):
        return level.get(literal.atom.predicate, 0) + 1
    return 0


def _match(terms: tuple[Term, ...], row: tuple[Value, ...], binding: Binding) -> Binding | None:
    extended = dict(binding)
    for term, value in zip(terms, row, strict=True):
        # A string never equals a number in Python, and 1 == 1.0 as the dialect wants.
        if isinstance(term, Constant):
            if term.value != value:
                return None
        elif not term.anonymous:
            if term.name in extended and extended[term.name] != value:
                return None
            extended[term.name] = value
    return extended


def _value(term: Term, binding: Binding) -> Value:
    return term.value if isinstance(term, Constant) else binding[term.name]


def _bindings(atoms: list[Atom], database: Database, binding: Binding) -> Iterator[Binding]:
    if not atoms:
        yield binding
        return
    first, rest = atoms[0], atoms[1:]
    for row in list(database.get(first.predicate, ())):
        if len(row) == first.arity and (extended := _match(first.terms, row, binding)) is not None:
            yield from _bindings(rest, database, extended)


def _holds(literal: Negation | Comparison, database: Database, binding: Binding) -> bool:
    if isinstance(literal, Comparison):
        return compare(literal.builtin, _value(literal.left, binding), _value(literal.right, binding))
    atom = literal.atom
    return not any(_match(atom.terms, row, binding) is not None for row in database.get(atom.predicate, ()))


def _consequences(rule: Rule, database: Database) -> set[tuple[Value, ...]]:
    atoms = [literal for literal in rule.body if isinstance(literal, Atom)]
    tests = [literal for literal in rule.body if not isinstance(literal, Atom)]
    return {
        tuple(_value(term, binding) for term in rule.head.terms)
        for binding in _bindings(atoms, database, {})
        if all(_holds(test, database, binding) for test in tests)
    }


def naive_model(program: Program, facts: Iterable[tuple[str, tuple[Value, ...]]]) -> Database:
    """Every fact of the program's least (perfect) model over its own facts and ``facts``."""
    database: Database = {}
    for fact in program.facts:
        database.setdefault(fact.atom.predicate, set()).add(fact.args)
    for predicate, args in facts:
        database.setdefault(predicate, set()).add(args)
    level = levels(program)
    for current in sorted(set(level.values())):
        rules = [rule for rule in program.rules if level[rule.head.predicate] == current]
        changed = True
        while changed:
            changed = False
            for rule in rules:
                known = database.setdefault(rule.head.predicate, set())
                new = _consequences(rule, database) - known
                if new:
                    known |= new
                    changed = True
    return database


def unify(terms: tuple[Term, ...], row: tuple[Value, ...], binding: Binding) -> Binding | None:
    """``binding`` extended so that ``terms`` match ``row`` (``_`` matches anything), or None."""
    return _match(terms, row, binding)


def holds(literal: Negation | Comparison, database: Database, binding: Binding) -> bool:
    """Whether a negation or comparison holds under ``binding`` over ``database``."""
    return _holds(literal, database, binding)

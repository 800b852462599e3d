"""Bottom-up evaluation of a checked program: the strata in order, each one semi-naively.

In a recursive stratum, every rule with a body atom inside the stratum gets one compiled plan per
such atom, reading that atom from the delta (the facts new in the last round) and everything else
from the full relations; the plans are made again each round from the relations' sizes then (on
the points-to benchmark, plans fixed when the stratum started, its relations empty, cost 2x).
The first round seeds the delta with all the stratum's facts so far (its input facts and what its
non-recursive rules derive); evaluation stops when a round finds nothing new. New facts are
collected per round and merged afterwards, so no relation or index changes while a plan iterates
over it.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import cast

from ouroboros_gates.miners.datalog.check import CheckedProgram, CheckedRule, value_has_type
from ouroboros_gates.miners.datalog.codegen import CompiledPlan, compile_plan
from ouroboros_gates.miners.datalog.errors import FactError
from ouroboros_gates.miners.datalog.factor import Evaluation, factor
from ouroboros_gates.miners.datalog.model import GroundAtom, Model
from ouroboros_gates.miners.datalog.plan import plan_rule
from ouroboros_gates.miners.datalog.relation import Derivation, Given, Relation, Row
from ouroboros_gates.miners.datalog.strata import Stratum
from ouroboros_gates.miners.datalog.syntax import Atom, Value

__all__ = ["InputFact", "evaluate"]

InputFact = tuple[str, tuple[Value, ...], object]
"""``(predicate, args, span)``; the span is the caller's own object (or None), kept for proofs."""

_New = dict[str, dict[Row, Derivation]]


def evaluate(
    checked: CheckedProgram, facts: Iterable[InputFact] = (), proofs: bool | Collection[str] = True
) -> Model:
    """The model of ``checked`` over its own facts and ``facts``. A fact given twice keeps its first
    span, the program's facts (span ``(file, line)``) coming before the input's. Raises
    ``FactError`` for an input fact of the wrong arity or type. Without ``proofs`` a derived fact keeps
    only the rule that derived it (less memory and time; the model then answers no ``proof``); with a
    collection of predicates, only theirs keep their derivations (each fact's last step, ``Model.step``:
    what ``ouro datalog run`` writes of its output relations)."""
    evaluation = factor(checked)
    kept = _kept(evaluation, proofs)
    relations = {predicate: Relation() for predicate in checked.arities}
    relations.update((predicate, Relation()) for predicate in sorted(evaluation.hidden))
    program = checked.program
    for fact in program.facts:
        relations[fact.atom.predicate].add(fact.args, Given((program.file, fact.atom.location.line)))
    with _collector_paused():
        _load(checked, relations, facts)
        for stratum in evaluation.strata:
            _evaluate_stratum(_Planner(checked, evaluation, stratum, relations, kept))
    for relation in relations.values():
        relation.drop_indexes()
    return Model(checked, evaluation, relations, kept)


def _kept(evaluation: Evaluation, proofs: bool | Collection[str]) -> frozenset[str] | None:
    """The predicates whose derivations are kept (None: every one): those asked for, and the hidden ones
    their rules read (a derivation by a factored rule is read through its hidden premises')."""
    if proofs is True:
        return None
    kept = set() if proofs is False else set(proofs)
    grown = True
    while grown:
        size = len(kept)
        for rule in evaluation.rules:
            if rule.rule.head.predicate in kept:
                kept.update(
                    literal.predicate
                    for literal in rule.body
                    if isinstance(literal, Atom) and literal.predicate in evaluation.hidden
                )
        grown = len(kept) > size
    return frozenset(kept)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Evaluation allocates millions of tuples and dicts, none in a reference cycle, so the cyclic
    garbage collector only rescans them (about 40% of the time on large closures): pause it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _load(checked: CheckedProgram, relations: dict[str, Relation], facts: Iterable[InputFact]) -> None:
    arities = dict(checked.arities)
    for predicate, args, span in facts:
        if not isinstance(predicate, str):
            raise FactError(
                f"input fact with predicate {predicate!r}: a predicate is a string (span {span!r})"
            )
        row = tuple(value if _plain(value) else _normalise(predicate, value, span) for value in args)
        arity = arities.setdefault(predicate, len(row))
        if len(row) != arity:
            atom = GroundAtom(predicate, row)
            raise FactError(
                f"input fact {atom} has {len(row)} arguments; {predicate} takes {arity} (span {span!r})"
            )
        kinds = checked.types.get(predicate)
        if kinds is not None and not all(map(value_has_type, row, kinds)):
            atom = GroundAtom(predicate, row)
            raise FactError(f"input fact {atom} does not match .decl {predicate}{kinds} (span {span!r})")
        relation = relations.get(predicate)
        if relation is None:
            relation = relations[predicate] = Relation()
        relation.add(row, Given(span))


def _plain(value: object) -> bool:
    """The common case, checked cheaply: an exact str or int, or a float that is not NaN."""
    kind = type(value)
    if kind is float:
        return not math.isnan(cast(float, value))
    return kind is str or kind is int


def _normalise(predicate: str, value: object, span: object) -> Value:
    """A subclass of str, int or float (an enum member, say) as the plain value; anything else,
    NaN (equal to nothing, itself included) and bool (an int by accident) are refused."""
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and not math.isnan(value):
        return float(value)
    raise FactError(
        f"input fact for {predicate} has the value {value!r}: an argument is a string, an int or a "
        f"float that is not NaN (span {span!r})"
    )


class _Unit:
    """A compiled plan bound to the relations it reads."""

    __slots__ = ("arguments", "function", "head")

    def __init__(self, compiled: CompiledPlan, relations: Mapping[str, Relation]) -> None:
        sources = [
            relations[s.predicate].rows
            if s.positions is None
            else relations[s.predicate].index(s.positions, s.projected)
            for s in compiled.sources
        ]
        self.function = compiled.function
        self.head = compiled.head
        self.arguments = (relations[compiled.head].rows, compiled.constants, *sources)

    def run(self, delta: Collection[Row] | None, new: _New) -> None:
        self.function(delta, new[self.head], *self.arguments)


class _Planner:
    """The units of one stratum's rules, planned from the relations' sizes when asked. Recursive
    relations are empty when a stratum starts, so a plan made then would join them first; the delta
    plans are made again every round, from that round's sizes (a plan already compiled for the same
    join order is reused)."""

    def __init__(
        self,
        checked: CheckedProgram,
        evaluation: Evaluation,
        stratum: Stratum,
        relations: Mapping[str, Relation],
        kept: frozenset[str] | None,
    ) -> None:
        self.checked = checked
        self.rules = evaluation.rules
        self.relations = relations
        self.kept = kept
        self.predicates = stratum.predicates
        members = set(stratum.predicates)
        self.base: list[int] = []
        self.recursive: list[tuple[int, int, str]] = []
        for index in stratum.rules:
            inside = [
                (position, literal.predicate)
                for position, literal in enumerate(self.rules[index].body)
                if isinstance(literal, Atom) and literal.predicate in members
            ]
            if not inside:
                self.base.append(index)
            self.recursive += [(index, position, predicate) for position, predicate in inside]
        self.compiled: dict[tuple[int, int | None, tuple[int, ...], bool], _Unit] = {}

    def unit(self, index: int, delta: int | None, sizes: Mapping[str, int]) -> _Unit:
        rule = self.rules[index]
        proofs = self.kept is None or rule.rule.head.predicate in self.kept
        key = (index, delta, _size_order(rule, sizes), proofs)
        unit = self.compiled.get(key)
        if unit is None:
            compiled = cast(CompiledPlan | None, self.checked.plans.get(key))
            if compiled is None:  # the program keeps its plans: the next evaluation of it plans nothing again
                compiled = self.checked.plans[key] = compile_plan(plan_rule(rule, delta, sizes), proofs)
            unit = self.compiled[key] = _Unit(compiled, self.relations)
        return unit

    def sizes(self) -> dict[str, int]:
        return {predicate: len(relation.rows) for predicate, relation in self.relations.items()}

    def base_units(self) -> list[_Unit]:
        """The plans of the rules that read nothing of the stratum, run once at the start."""
        sizes = self.sizes()
        return [self.unit(index, None, sizes) for index in self.base]

    def delta_units(self) -> list[tuple[str, _Unit]]:
        """The delta plans, each with the predicate it reads from the delta, for this round."""
        sizes = self.sizes()
        return [
            (predicate, self.unit(index, position, sizes)) for index, position, predicate in self.recursive
        ]


def _size_order(rule: CheckedRule, sizes: Mapping[str, int]) -> tuple[int, ...]:
    """The dense rank of each body atom's relation size: all of the sizes a plan depends on (``plan_rule``
    only compares them), so two moments with the same order have the same plan."""
    counts = [sizes.get(literal.predicate, 0) for literal in rule.body if isinstance(literal, Atom)]
    distinct = sorted(set(counts))
    return tuple(distinct.index(count) for count in counts)


def _merge(relations: Mapping[str, Relation], new: _New) -> None:
    for predicate, rows in new.items():
        if rows:
            relations[predicate].extend(rows)


def _evaluate_stratum(planner: _Planner) -> None:
    relations = planner.relations
    new: _New = {predicate: {} for predicate in planner.predicates}
    for unit in planner.base_units():
        unit.run(None, new)
    _merge(relations, new)
    if not planner.recursive:
        return
    delta: Mapping[str, Collection[Row]] = {p: list(relations[p].rows) for p in planner.predicates}
    while any(delta.values()):
        new = {predicate: {} for predicate in planner.predicates}
        for predicate, unit in planner.delta_units():
            rows = delta[predicate]
            if rows:
                unit.run(rows, new)
        _merge(relations, new)
        delta = new

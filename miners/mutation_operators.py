"""The mutants of a miner's own test: every single change to its rules or its labels (the operators of
``miners.mutate``, which judges them). Drop a body literal; negate an atom (``a`` ↔ ``!a``); swap a comparison
for its opposite (``gt`` ↔ ``le``, ``ge`` ↔ ``lt``, ``eq`` ↔ ``ne``); replace the knee variable in a
comparison by the fitted constant; drop a rule; flip one label.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from ouroboros_gates.miners.datalog import (
    Atom,
    Comparison,
    Constant,
    Literal,
    Negation,
    Program,
    Rule,
    Value,
    Variable,
)
from ouroboros_gates.miners.labels import Labels
from ouroboros_gates.miners.rules import KNEE
from ouroboros_gates.schemas import MutationOperator

__all__ = ["OPPOSITE", "Mutant", "mutant_text", "mutants"]

OPPOSITE = {"gt": "le", "le": "gt", "ge": "lt", "lt": "ge", "eq": "ne", "ne": "eq"}
"""Each comparison's negation."""


@dataclass(frozen=True)
class Mutant:
    """One change to the rules or to the labels."""

    operator: MutationOperator
    description: str
    program: Program
    labels: Labels
    label_index: int | None = None

    @property
    def changes_rules(self) -> bool:
        return self.operator is not MutationOperator.FLIP_LABEL


def _with_body(program: Program, rule: Rule, body: tuple[Literal, ...]) -> Program:
    rules = tuple(replace(r, body=body) if r is rule else r for r in program.rules)
    return replace(program, rules=rules)


def _literal_mutants(
    program: Program, rule: Rule, kappa: Value | None
) -> Iterator[tuple[MutationOperator, str, Program]]:
    line = f"line {rule.location.line}"
    knees = _knee_variables(rule)

    def body_with(position: int, *literals: Literal) -> Program:
        return _with_body(program, rule, (*rule.body[:position], *literals, *rule.body[position + 1 :]))

    for position, literal in enumerate(rule.body):
        yield MutationOperator.DROP_LITERAL, f"{line}: drop `{literal}`", body_with(position)
        operator, changed = _opposite(literal)
        yield operator, f"{line}: `{literal}` -> `{changed}`", body_with(position, changed)
        fixed = _fix_knee(literal, knees, kappa) if isinstance(literal, Comparison) else None
        if fixed is not None:
            yield (
                MutationOperator.KNEE_CONSTANT,
                f"{line}: `{literal}` -> `{fixed}`",
                body_with(position, fixed),
            )


def _knee_variables(rule: Rule) -> set[str]:
    """The variables the rule's ``knee`` atoms bind."""
    knees = (literal for literal in rule.body if isinstance(literal, Atom) and literal.predicate == KNEE)
    return {name for atom in knees for name in atom.variables()}


def _opposite(literal: Literal) -> tuple[MutationOperator, Literal]:
    """The literal negated: an atom and its negation swapped, a comparison turned to its opposite."""
    if isinstance(literal, Atom):
        return MutationOperator.NEGATE_LITERAL, Negation(literal)
    if isinstance(literal, Negation):
        return MutationOperator.NEGATE_LITERAL, literal.atom
    return MutationOperator.SWAP_COMPARISON, replace(literal, builtin=OPPOSITE[literal.builtin])


def _fix_knee(comparison: Comparison, knees: set[str], kappa: Value | None) -> Comparison | None:
    """The comparison with the knee variable replaced by the fitted constant, if there is one and the
    comparison reads the knee."""
    if kappa is None:
        return None

    def fixed(term: Variable | Constant) -> Variable | Constant:
        return Constant(kappa) if isinstance(term, Variable) and term.name in knees else term

    changed = replace(comparison, left=fixed(comparison.left), right=fixed(comparison.right))
    return None if changed == comparison else changed


def mutants(program: Program, labels: Labels, kappa: Value | None) -> list[Mutant]:
    """Every single-change mutant of ``program`` and ``labels``, rules first, in source order."""
    return [
        *_changed_literals(program, labels, kappa),
        *_dropped_rules(program, labels),
        *_flipped_labels(program, labels),
    ]


def _changed_literals(program: Program, labels: Labels, kappa: Value | None) -> Iterator[Mutant]:
    """Each rule's literals dropped, negated or with the knee fixed, rule by rule."""
    for rule in program.rules:
        for operator, description, changed in _literal_mutants(program, rule, kappa):
            yield Mutant(operator, description, changed, labels)


def _dropped_rules(program: Program, labels: Labels) -> Iterator[Mutant]:
    """The program without each of its rules in turn."""
    for rule in program.rules:
        kept = replace(program, rules=tuple(r for r in program.rules if r is not rule))
        yield Mutant(
            MutationOperator.DROP_RULE, f"line {rule.location.line}: drop rule `{rule}`", kept, labels
        )


def _flipped_labels(program: Program, labels: Labels) -> Iterator[Mutant]:
    """The labels with each row flipped in turn."""
    for index, row in enumerate(labels.rows):
        sign = "+ -> -" if row.positive else "- -> +"
        where = f"labels row {labels.lines[index]}: {row.instance} {sign}"
        yield Mutant(MutationOperator.FLIP_LABEL, where, program, labels.flipped(index), index)


def mutant_text(mutant: Mutant) -> str:
    """What a survivor is printed with: its whole rules text, or its flipped label row."""
    if mutant.changes_rules:
        return str(mutant.program)
    rows = mutant.labels.rows if mutant.label_index is None else (mutant.labels.rows[mutant.label_index],)
    return replace(mutant.labels, rows=rows).render()

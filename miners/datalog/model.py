"""The result of evaluation: the facts of every predicate, and a proof tree for each of them.

A derived fact records only its rule and the values of the rule's non-head variables; its proof is
rebuilt on demand by substituting them into the rule. Every body fact was known before the fact it
proves, so proofs are finite trees, built here without recursion because chains can be long.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, ItemsView, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from ouroboros_gates.miners.datalog.check import CheckedProgram, CheckedRule
from ouroboros_gates.miners.datalog.errors import ProofsNotKeptError, UnknownFactError
from ouroboros_gates.miners.datalog.factor import Evaluation
from ouroboros_gates.miners.datalog.relation import Derivation, Given, Relation, Row, values_at
from ouroboros_gates.miners.datalog.syntax import (
    Atom,
    Comparison,
    Constant,
    Literal,
    Negation,
    Program,
    Rule,
    Term,
    Value,
    Variable,
    format_value,
)

__all__ = ["Binding", "Condition", "GroundAtom", "Model", "ProofNode"]


class GroundAtom(NamedTuple):
    """A fact as ``(predicate, args)``."""

    predicate: str
    args: tuple[Value, ...]

    def __str__(self) -> str:
        return f"{self.predicate}({', '.join(map(format_value, self.args))})"


@dataclass(frozen=True, slots=True)
class Condition:
    """A comparison or negation a derivation checked, with its variables' values (``None`` for a
    negated atom's ``_``)."""

    predicate: str
    args: tuple[Value | None, ...]
    negated: bool

    def __str__(self) -> str:
        args = ", ".join("_" if arg is None else format_value(arg) for arg in self.args)
        return f"{'!' if self.negated else ''}{self.predicate}({args})"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ProofNode:
    """One step of a proof: an atom and the rule that derived it from its children, or, for an
    extensional fact, no rule and the span it was given with."""

    atom: GroundAtom
    rule: Rule | None
    span: object | None
    children: tuple[ProofNode, ...] = ()
    conditions: tuple[Condition, ...] = ()
    expanded: bool = True
    """False for a derived premise of ``Model.step``: its rule is known, its own premises are not built."""

    def leaves(self) -> list[ProofNode]:
        """The extensional facts the proof rests on, each once, in the order the proof uses them."""
        return [node for node in self.walk() if node.rule is None]

    def walk(self) -> Iterator[ProofNode]:
        """Each distinct node once, depth first, children left to right. A subproof used twice is
        visited at its first use only: expanding every use can grow exponentially with depth."""
        seen: set[GroundAtom] = set()
        stack: list[ProofNode] = [self]
        while stack:
            node = stack.pop()
            if node.atom in seen:
                continue
            seen.add(node.atom)
            yield node
            stack.extend(reversed(node.children))

    def __repr__(self) -> str:
        return f"ProofNode({self.atom}, rule={None if self.rule is None else self.rule.index})"

    def cut(self, depth: int) -> ProofNode:
        """This proof with each derived node ``depth`` steps below the root left unexpanded (its rule kept,
        its premises not shown): ``ouro datalog explain --depth``."""
        built: dict[tuple[GroundAtom, int], ProofNode] = {}
        stack: list[tuple[ProofNode, int, bool]] = [(self, 0, False)]
        while stack:
            node, level, ready = stack.pop()
            key = (node.atom, level)
            if key in built and not ready:
                continue
            if node.rule is None or not node.expanded:
                built[key] = node
            elif level >= depth:
                built[key] = replace(node, children=(), conditions=(), expanded=False)
            elif not ready:
                stack.append((node, level, True))
                stack.extend((child, level + 1, False) for child in node.children)
            else:
                built[key] = replace(node, children=tuple(built[(c.atom, level + 1)] for c in node.children))
        return built[(self.atom, 0)]

    def render(self, span: Callable[[object], str] = str) -> str:
        """The tree, indented, each leaf with its span as ``span`` writes it; a subproof already shown is not
        expanded again."""
        lines: list[str] = []
        shown: set[GroundAtom] = set()
        stack: list[tuple[ProofNode | Condition, int]] = [(self, 0)]
        while stack:
            item, depth = stack.pop()
            pad = "  " * depth
            if isinstance(item, Condition):
                lines.append(f"{pad}{item}  [checked]")
            elif item.rule is None:
                lines.append(f"{pad}{item.atom}  [fact at {span(item.span)}]")
            elif item.atom in shown:
                lines.append(f"{pad}{item.atom}  [shown above]")
            elif not item.expanded:
                lines.append(f"{pad}{item.atom}  [rule {item.rule.index}, not expanded]")
            else:
                shown.add(item.atom)
                lines.append(
                    f"{pad}{item.atom}  [rule {item.rule.index} at {item.rule.location}: {item.rule}]"
                )
                below: list[ProofNode | Condition] = [*item.children, *item.conditions]
                stack.extend((child, depth + 1) for child in reversed(below))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


@dataclass(frozen=True, slots=True)
class Binding:
    """How a derivation by one of the rules evaluation ran binds every variable of the rule as written.

    ``values(row, derivation)`` is the fact's row, then its derivation (the rule's index and witness values),
    then, for each hidden premise the rule was factored into (``factor.py``), that premise's derivation:
    ``slots`` names the place of each variable of ``rule`` (the rule as written, its ``_`` renamed apart)
    in it. One binding serves every fact its rule derives: proofs and ``ouro datalog run``'s lines both read
    premises through it."""

    rule: CheckedRule
    slots: Mapping[str, int]
    lookups: tuple[tuple[Mapping[Row, Derivation], Callable[[tuple[Value, ...]], Row]], ...]

    def values(self, row: Row, derivation: tuple[Value, ...]) -> tuple[Value, ...]:
        """The values ``slots`` indexes, for ``row`` derived by ``derivation``."""
        values = row + derivation
        for rows, key in self.lookups:
            values += rows[key(values)]  # type: ignore[operator]  # a hidden fact's derivation is a tuple
        return values


class Model:
    """The facts a checked program derives from its input, each with one derivation (the first
    found) from which ``proof`` rebuilds a proof tree."""

    def __init__(
        self,
        checked: CheckedProgram,
        evaluation: Evaluation,
        relations: Mapping[str, Relation],
        kept: frozenset[str] | None = None,
    ) -> None:
        self._checked = checked
        self._evaluation = evaluation
        self._relations = relations
        self._bindings: dict[int, Binding] = {}
        self._kept = kept
        self.proofs = kept is None
        """Whether every derivation was kept (``evaluate(..., proofs=False)`` keeps none: no ``proof``, no
        ``step``; with predicates named, only theirs: ``keeps``)."""

    def keeps(self, predicate: str) -> bool:
        """Whether the derived facts of ``predicate`` kept their derivations (``step`` and ``binding`` read
        them)."""
        return self._kept is None or predicate in self._kept

    @property
    def program(self) -> Program:
        return self._checked.program

    def predicates(self) -> tuple[str, ...]:
        """Every predicate of the program or the input, in order of first appearance."""
        return tuple(p for p in self._relations if p not in self._evaluation.hidden)

    def rows(self, predicate: str) -> Collection[Row]:
        """The facts of ``predicate`` in the order they were found, without a copy (empty for a predicate
        never seen): for writing a large relation out in one pass."""
        relation = self._relations.get(predicate)
        return () if relation is None else relation.rows.keys()

    def derivations(self, predicate: str) -> ItemsView[Row, Derivation]:
        """The facts of ``predicate`` with their derivations (``Given``, or the rule's index and witness
        values that ``binding`` reads), in the order they were found, without a copy."""
        relation = self._relations.get(predicate)
        return ({} if relation is None else relation.rows).items()

    def binding(self, index: int) -> Binding:
        """How a derivation whose first value is ``index`` binds its written rule's variables (made once)."""
        found = self._bindings.get(index)
        if found is None:
            found = self._bindings[index] = self._binding(index)
        return found

    def _binding(self, index: int) -> Binding:
        rule = self._evaluation.rules[index]
        slots = _head_slots(rule)
        width = len(rule.rule.head.terms)
        lookups = []
        pending = [rule]  # in the order their derivations are appended to the values
        for current in pending:
            slots.update((name, width + 1 + number) for number, name in enumerate(current.witnesses))
            width += 1 + len(current.witnesses)
            for atom in self._hidden_atoms(current):
                # a hidden atom's terms are variables the rule binds; its rule is ~N's N
                lookups.append(
                    (self._relations[atom.predicate].rows, values_at(_variable_slots(atom, slots)))
                )
                pending.append(self._evaluation.rules[int(atom.predicate[1:])])
        written = self._checked.rules[self._evaluation.origin[index]]
        return Binding(written, slots, tuple(lookups))

    def _hidden_atoms(self, rule: CheckedRule) -> list[Atom]:
        """The rule's body atoms of hidden predicates (premises factored out of it)."""
        return [
            literal
            for literal in rule.body
            if isinstance(literal, Atom) and literal.predicate in self._evaluation.hidden
        ]

    def facts(self, predicate: str) -> set[Row]:
        """The facts of ``predicate`` (empty for a predicate never seen)."""
        relation = self._relations.get(predicate)
        return set() if relation is None else set(relation.rows)

    def __contains__(self, atom: object) -> bool:
        if not isinstance(atom, tuple) or len(atom) != 2:
            return False
        relation = self._relations.get(atom[0])
        return relation is not None and tuple(atom[1]) in relation.rows

    def proof(self, predicate: str, args: tuple[Value, ...]) -> ProofNode:
        """The proof tree of ``predicate(args)``; ``UnknownFactError`` if the model lacks it."""
        root = GroundAtom(predicate, tuple(args))
        built: dict[GroundAtom, ProofNode] = {}
        premises: dict[GroundAtom, tuple[list[GroundAtom], tuple[Condition, ...], Rule] | None] = {}
        stack = [root]
        while stack:
            atom = stack[-1]
            if atom in built:
                stack.pop()
                continue
            if atom not in premises:
                premises[atom] = self._premises(atom)
            found = premises[atom]
            if found is None:
                built[atom] = ProofNode(atom, None, self._given(atom).span)
                stack.pop()
                continue
            children, conditions, rule = found
            waiting = [child for child in children if child not in built]
            if waiting:
                stack.extend(waiting)
                continue
            built[atom] = ProofNode(atom, rule, None, tuple(built[c] for c in children), conditions)
            stack.pop()
        return built[root]

    def step(self, predicate: str, args: tuple[Value, ...]) -> ProofNode:
        """The last step of ``predicate(args)``'s proof, at the cost of one rule's substitution: the
        node with its rule and conditions, each given premise a leaf with its span, each derived
        premise a node with its rule left unexpanded (its own ``step`` continues the proof). A given
        atom is its own leaf. ``UnknownFactError`` if the model lacks it."""
        root = GroundAtom(predicate, tuple(args))
        found = self._premises(root)
        if found is None:
            return ProofNode(root, None, self._given(root).span)
        children, conditions, rule = found
        nodes = []
        for child in children:
            derivation = self._derivation(child)
            if isinstance(derivation, Given):
                nodes.append(ProofNode(child, None, derivation.span))
            else:
                written = self._checked.rules[self._evaluation.origin[int(derivation[0])]]
                nodes.append(ProofNode(child, written.rule, None, expanded=False))
        return ProofNode(root, rule, None, tuple(nodes), conditions)

    def _derivation(self, atom: GroundAtom) -> Derivation:
        relation = self._relations.get(atom.predicate)
        derivation = None if relation is None else relation.rows.get(atom.args)
        if derivation is None:
            raise UnknownFactError(f"the model holds no fact {atom}")
        return derivation

    def _given(self, atom: GroundAtom) -> Given:
        derivation = self._derivation(atom)
        assert isinstance(derivation, Given)
        return derivation

    def _premises(self, atom: GroundAtom) -> tuple[list[GroundAtom], tuple[Condition, ...], Rule] | None:
        """The body facts and checked conditions of ``atom``'s derivation, as the rule is written; None if
        it is given."""
        derivation = self._derivation(atom)
        if isinstance(derivation, Given):
            return None
        if not self.keeps(atom.predicate):
            raise ProofsNotKeptError(
                f"no proof of {atom}: the model was evaluated without proofs of {atom.predicate}"
            )
        shape = self.binding(int(derivation[0]))
        values = shape.values(atom.args, derivation)
        binding = {name: values[slot] for name, slot in shape.slots.items()}
        children, conditions = _ground_body(shape.rule.body, binding)
        return children, conditions, shape.rule.rule


def _head_slots(rule: CheckedRule) -> dict[str, int]:
    """Each variable of the rule's head at its first place in the head."""
    slots: dict[str, int] = {}
    for position, term in enumerate(rule.rule.head.terms):
        if isinstance(term, Variable):
            slots.setdefault(term.name, position)
    return slots


def _variable_slots(atom: Atom, slots: Mapping[str, int]) -> list[int]:
    """The slots of the atom's variables, in order."""
    return [slots[term.name] for term in atom.terms if isinstance(term, Variable)]


def _ground_body(
    body: Sequence[Literal], binding: Mapping[str, Value]
) -> tuple[list[GroundAtom], tuple[Condition, ...]]:
    """The body under ``binding``: its atoms as the facts they used, its comparisons and negations as the
    conditions they checked."""
    children: list[GroundAtom] = []
    conditions: list[Condition] = []
    for literal in body:
        if isinstance(literal, Atom):
            children.append(GroundAtom(literal.predicate, tuple(_value(t, binding) for t in literal.terms)))
        else:
            conditions.append(_condition(literal, binding))
    return children, tuple(conditions)


def _condition(literal: Comparison | Negation, binding: Mapping[str, Value]) -> Condition:
    """A comparison or negation with its variables' values (a negated atom's ``_`` as None)."""
    if isinstance(literal, Comparison):
        args = (_value(literal.left, binding), _value(literal.right, binding))
        return Condition(literal.builtin, args, negated=False)
    args_or_none = tuple(_value_or_none(t, binding) for t in literal.atom.terms)
    return Condition(literal.atom.predicate, args_or_none, negated=True)


def _value(term: Term, binding: Mapping[str, Value]) -> Value:
    return term.value if isinstance(term, Constant) else binding[term.name]


def _value_or_none(term: Term, binding: Mapping[str, Value]) -> Value | None:
    return term.value if isinstance(term, Constant) else binding.get(term.name)

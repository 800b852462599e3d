"""Stratification: the strongly connected components of the predicate dependency graph, in the
order they must be evaluated, and the refusal of any negation inside a component.

A rule ``p :- q, !r`` adds the edges p -> q (positive) and p -> r (negative). A component is a set
of mutually recursive predicates; a negative edge inside one is recursion through negation.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ouroboros_gates.miners.datalog.errors import UnstratifiedError
from ouroboros_gates.miners.datalog.syntax import Atom, Negation, Rule

__all__ = ["Stratum", "stratify"]


@dataclass(frozen=True, slots=True)
class Stratum:
    """Mutually recursive predicates evaluated together, after every stratum they depend on."""

    predicates: tuple[str, ...]
    rules: tuple[int, ...]
    recursive: bool


def _body_predicates(rule: Rule) -> Iterator[tuple[str, bool]]:
    """``(predicate, negated)`` for every atom of the body."""
    for literal in rule.body:
        if isinstance(literal, Atom):
            yield literal.predicate, False
        elif isinstance(literal, Negation):
            yield literal.atom.predicate, True


class _Tarjan:
    """Tarjan's strongly connected components, without recursion (rule sets may be deep). A
    component comes out only after every component it has an edge to: the order of evaluation."""

    def __init__(self, edges: dict[str, list[str]]) -> None:
        self.edges = edges
        self.index: dict[str, int] = {}
        self.low: dict[str, int] = {}
        self.stack: list[str] = []
        self.on_stack: set[str] = set()
        self.found: list[list[str]] = []

    def components(self, nodes: Sequence[str]) -> list[list[str]]:
        for root in nodes:
            if root not in self.index:
                self.connect(root)
        return self.found

    def visit(self, node: str) -> Iterator[str]:
        self.index[node] = self.low[node] = len(self.index)
        self.stack.append(node)
        self.on_stack.add(node)
        return iter(self.edges.get(node, ()))

    def connect(self, root: str) -> None:
        work = [(root, self.visit(root))]
        while work:
            node, children = work[-1]
            child = self.unvisited(node, children)
            if child is not None:
                work.append((child, self.visit(child)))
            else:
                work.pop()
                self.finish(node, work[-1][0] if work else None)

    def unvisited(self, node: str, children: Iterator[str]) -> str | None:
        """The node's next child not visited yet (None when none is left); a child met on the stack lowers
        the node's low link."""
        for child in children:
            if child not in self.index:
                return child
            if child in self.on_stack:
                self.low[node] = min(self.low[node], self.index[child])
        return None

    def finish(self, node: str, parent: str | None) -> None:
        """A node whose children are done: its low link passes to its parent, and a root of a component
        pops it."""
        if parent is not None:
            self.low[parent] = min(self.low[parent], self.low[node])
        if self.low[node] == self.index[node]:
            self.found.append(self.pop(node))

    def pop(self, root: str) -> list[str]:
        component: list[str] = []
        while True:
            node = self.stack.pop()
            self.on_stack.discard(node)
            component.append(node)
            if node == root:
                return component


def _path(edges: dict[str, list[str]], start: str, goal: str, inside: set[str]) -> list[str]:
    """A shortest path ``start -> ... -> goal`` through the nodes ``inside`` (one exists: both lie
    in the same component)."""
    previous: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            break
        for child in edges.get(node, ()):
            if child in inside and child not in previous:
                previous[child] = node
                queue.append(child)
    return _walked_back(previous, goal)


def _walked_back(previous: dict[str, str | None], goal: str) -> list[str]:
    """The path to ``goal`` from the search's start, following each node's predecessor."""
    path: list[str] = []
    cursor: str | None = goal
    while cursor is not None:
        path.append(cursor)
        cursor = previous[cursor]
    return path[::-1]


def stratify(predicates: Sequence[str], rules: Sequence[Rule]) -> tuple[Stratum, ...]:
    """The strata with rules, in evaluation order. Raises ``UnstratifiedError`` naming the cycle
    ``p -> q -> p`` and the rule whose negation closes it."""
    edges = _edges(predicates, rules)
    components = _Tarjan(edges).components(predicates)
    component_of: dict[str, int] = {}
    for number, component in enumerate(components):
        component_of.update(dict.fromkeys(component, number))
    _check_negations(rules, edges, components, component_of)
    return _strata(predicates, rules, components, component_of)


def _edges(predicates: Sequence[str], rules: Sequence[Rule]) -> dict[str, list[str]]:
    """Each predicate's dependencies: the predicates its rules' bodies read, each once, in order."""
    edges: dict[str, list[str]] = {predicate: [] for predicate in predicates}
    for rule in rules:
        for predicate, _negated in _body_predicates(rule):
            if predicate not in edges[rule.head.predicate]:
                edges[rule.head.predicate].append(predicate)
    return edges


def _check_negations(
    rules: Sequence[Rule],
    edges: dict[str, list[str]],
    components: list[list[str]],
    component_of: dict[str, int],
) -> None:
    """``UnstratifiedError`` at the first rule negating a predicate of its own head's component."""
    for rule in rules:
        head = rule.head.predicate
        for predicate, negated in _body_predicates(rule):
            if negated and component_of[predicate] == component_of[head]:
                inside = set(components[component_of[head]])
                cycle = [head, *_path(edges, predicate, head, inside)]
                message = f"recursion through negation: {' -> '.join(cycle)} in {rule}"
                raise UnstratifiedError(message, rule.location.file, rule.location.line)


def _strata(
    predicates: Sequence[str],
    rules: Sequence[Rule],
    components: list[list[str]],
    component_of: dict[str, int],
) -> tuple[Stratum, ...]:
    order = {predicate: position for position, predicate in enumerate(predicates)}
    rules_of = _rules_by_component(rules, component_of)
    strata: list[Stratum] = []
    for number, component in enumerate(components):
        members = rules_of.get(number)
        if not members:
            continue
        recursive = _reads_own_component(members, number, component_of)
        strata.append(
            Stratum(
                tuple(sorted(component, key=order.__getitem__)), tuple(r.index for r in members), recursive
            )
        )
    return tuple(strata)


def _rules_by_component(rules: Sequence[Rule], component_of: dict[str, int]) -> dict[int, list[Rule]]:
    """The rules of each component (their heads'), in order."""
    rules_of: dict[int, list[Rule]] = {}
    for rule in rules:
        rules_of.setdefault(component_of[rule.head.predicate], []).append(rule)
    return rules_of


def _reads_own_component(members: list[Rule], number: int, component_of: dict[str, int]) -> bool:
    """Whether a rule of component ``number`` reads a predicate of that component: it is recursive."""
    return any(
        component_of[predicate] == number for rule in members for predicate, _ in _body_predicates(rule)
    )

"""What the taint tracker's walk holds while it reads a function: each name's taint, the arms that may not
run, known constants, containers followed element by element, argument vectors, and what a local was made
by; and how the two sides of an ``if`` join after it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from tree_sitter import Node

from ouroboros_gates.decider.instruments._taint_fold import constant
from ouroboros_gates.decider.instruments._taint_guards import is_path_of
from ouroboros_gates.decider.instruments._taint_model import (
    Flow,
    Summary,
    Taint,
    TaintVocabulary,
    join_taints,
    node_text,
)
from ouroboros_gates.decider.instruments._taint_slots import container_shape

__all__ = ["CALLS", "VECTORS", "Arm", "Sides", "Walk"]

Arm = dict[str, Taint | None]
"""The names an arm assigned, each with what it held before the arm."""
STEPS = 8
"""How many assignment lines a taint remembers (the last ones), for the report."""
VECTORS = frozenset({"list", "tuple", "list_comprehension", "array_creation_expression", "array_initializer"})
"""Node types of an argument vector made in place."""
CALLS = frozenset(
    {
        "method_invocation",
        "call",
        "function_call_expression",
        "member_call_expression",
        "scoped_call_expression",
        "object_creation_expression",
    }
)
"""Node types of a call (a local bound to one is known by it)."""


@dataclass
class Sides:
    """An ``if``'s two sides, each run from the state before it (``start``): the state each ended in and the
    names each assigned, with what they held before."""

    start: dict[str, Taint]
    then_env: dict[str, Taint]
    then_set: Arm
    else_env: dict[str, Taint]
    else_set: Arm
    before: Arm = field(init=False)
    """Each name either side assigned, as it was before (an element: as its variable had it)."""

    def __post_init__(self) -> None:
        self.before = {**self.else_set, **self.then_set}

    def held(self, env: dict[str, Taint], assigned: Arm, name: str) -> Taint | None:
        """What ``name`` holds after one side: what the side left it, or what it held before the ``if``."""
        return env.get(name) if name in assigned else self.start.get(name, self.before.get(name))

    def after(self, name: str, leaves: bool) -> Taint | None:
        """What ``name`` holds after the ``if``: the else side's value, joined with the then side's unless
        that side never comes back."""
        value = self.held(self.else_env, self.else_set, name)
        return value if leaves else join_taints(self.held(self.then_env, self.then_set, name), value)


class Walk:
    """The state of one walk over one function, and the updates every language's statements make to it."""

    def __init__(
        self,
        vocab: TaintVocabulary,
        summaries: dict[str, Summary],
        name: str,
        defined: frozenset[str] = frozenset(),
        imported: dict[str, str] | None = None,
    ) -> None:
        self.vocab = vocab
        self.summaries = summaries
        self.name = name
        self.defined = defined  # the functions of this file a bare call can name
        self.imported = imported or {}  # a name taken from a module -> the module (a bare call's receiver)
        self.env: dict[str, Taint] = {}
        self.flows: list[Flow] = []
        self.returns: Taint | None = None
        self.arms: list[dict[str, Taint | None]] = []  # per open arm: each name it assigned, as it was before
        self.consts: dict[str, object] = {}  # locals holding a known literal (condition folding)
        self.slots: dict[str, list[Taint | None] | dict[object, Taint | None]] = {}  # precise containers
        self.vectors: set[str] = set()  # locals holding a list or array made here (an argument vector)
        self.made_by: dict[str, str] = {}  # locals holding what a call returned: the call's text
        self.page: str | None = None  # a route's priors when what it returns is the page it serves (HTML)
        self.paths: set[str] = (
            set()
        )  # elements and fields a condition validated, tracked in ``env`` by their text

    # -- state -----------------------------------------------------------------------------------
    @property
    def weak(self) -> int:
        """How many arms that may not run the walk is inside."""
        return len(self.arms)

    @contextmanager
    def arm(self) -> Iterator[None]:
        """Statements that may not run (a branch, a loop body, a case, a handler). Inside, assignments are
        plain (``x = input; x = escape(x)`` leaves x escaped); when the arm ends, each name it assigned also
        keeps the taint it had before the arm, which is what it holds when the arm did not run."""
        self.arms.append({})
        try:
            yield
        finally:
            before = self.arms.pop()
            for name, value in before.items():
                if self.arms:
                    self.arms[-1].setdefault(
                        name, value
                    )  # the enclosing arm had not assigned it: as it was then
                merged = join_taints(value, self.env.get(name))
                if merged is None:
                    self.env.pop(name, None)
                else:
                    self.env[name] = merged

    def side(self, start: dict[str, Taint], run: Callable[[], None]) -> tuple[dict[str, Taint], Arm]:
        """Run one side of an ``if`` from ``start``: the state it ends in and the names it assigned, each with
        what it held before."""
        self.env = dict(start)
        self.arms.append({})
        try:
            run()
        finally:
            assigned = self.arms.pop()
        return self.env, assigned

    def join_sides(self, sides: Sides, leaves: bool) -> None:
        """After an ``if``: each name holds what either side left it, or only what the else side left when the
        then side never comes back (``leaves``)."""
        self.env = dict(sides.else_env) if leaves else dict(sides.start)
        for name, held in sides.before.items():
            if self.arms:
                self.arms[-1].setdefault(
                    name, sides.start.get(name, held)
                )  # an enclosing arm: as it was before the if
            value = sides.after(name, leaves)
            if value is None:
                self.env.pop(name, None)
            else:
                self.env[name] = value

    def assign(self, name: str, value: Taint | None, *, join: bool = False) -> None:
        """A plain update, or a join for ``+=`` and for a container that takes one more value. Inside an arm
        the taint a name had before the arm is kept aside and joined back when the arm ends."""
        if join:
            self.join_into(name, value)
            return
        for key in self.with_elements(name):  # its elements follow it
            if self.arms:
                self.arms[-1].setdefault(key, self.env.get(key))
            if value is None:
                self.env.pop(key, None)
            else:
                self.env[key] = value

    def join_into(self, name: str, value: Taint | None) -> None:
        """``+=``, a container that takes one more value: the name holds what it held and ``value``."""
        if value is not None:
            self.env[name] = join_taints(self.env.get(name), value) or value

    def with_elements(self, name: str) -> list[str]:
        """A variable and the elements and fields of it a condition validated (tracked by their text)."""
        return [name, *(path for path in self.paths if is_path_of(path, name))]

    def bind(self, name: str, node: Node | None, value: Taint | None) -> None:
        """Assign ``name`` from the expression ``node``: its taint, and its literal value or container
        shape."""
        if value is not None and node is not None:
            value = _stepped(value, node.start_point.row + 1)
        self.assign(name, value)
        self.consts.pop(name, None)
        self.slots.pop(name, None)
        self.vectors.discard(name)
        self.made_by.pop(name, None)
        if not self.weak and node is not None:
            self.remember(name, node)

    def remember(self, name: str, node: Node) -> None:
        """What a local is known as from the expression it was bound to: an argument vector, the call that
        made it, its literal value, its container's shape."""
        if node.type in VECTORS:
            self.vectors.add(name)
        if node.type in CALLS:
            self.made_by[name] = node_text(node)
        constant = self.const(node)
        if constant is not None:
            self.consts[name] = constant
        shape = container_shape(node)
        if shape is not None:
            self.slots[name] = shape

    def store_in_base(self, target: Node | None, value: Taint | None) -> None:
        """An element or field assigned (``a.b[0] = x``): the variable it is rooted at holds the value too."""
        base = self._base(target)
        if base is not None and value is not None:
            self.assign(base, value, join=True)

    def const(self, node: Node | None) -> object:
        """The literal value of a side-effect-free expression over literals and known locals, else None."""
        return constant(node, self.consts)

    def _base(self, node: Node | None) -> str | None:
        """The variable a receiver or an lvalue is rooted at (``a`` of ``a.b[0].c``)."""
        while node is not None:
            if node.type == "identifier":
                return node_text(node)
            node = (
                node.child_by_field_name("object")
                or node.child_by_field_name("array")
                or node.child_by_field_name("value")
            )
        return None


def _stepped(value: Taint, line: int) -> Taint:
    """The taint with ``line`` added to the steps it passed through (the last ``STEPS`` kept)."""
    if line != value.line and line not in value.steps:
        return replace(value, steps=(*value.steps, line)[-STEPS:])
    return value

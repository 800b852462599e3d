"""Python's statements and expressions for the taint tracker's walk (``_taint_tracker``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tree_sitter import Node

from ouroboros_gates.decider.instruments._taint_model import Taint, join_taints, node_text
from ouroboros_gates.decider.instruments._taint_tracker import Expression, Statement, Tracker

__all__ = ["PythonTracker"]

_SESSION = re.compile(r"(^|\.)session$")
"""What a framework's session is called (``session``, ``flask.session``, ``request.session``)."""


class PythonTracker(Tracker):
    """The walk over a Python function body."""

    members = frozenset({"attribute", "subscript"})

    def local(self, obj: Node | None) -> bool:
        """No receiver, ``self`` or ``cls``."""
        return obj is None or node_text(obj) in ("self", "cls")

    def alternatives(self, alternatives: Sequence[Node]) -> None:
        for child in alternatives:  # each ``elif`` and the ``else`` an arm of its own
            with self.arm():
                self.expr(child.child_by_field_name("condition"))
                self.stmt(child.child_by_field_name("consequence") or child.child_by_field_name("body"))

    def for_statement(self, node: Node) -> None:
        value = self.expr(node.child_by_field_name("right"))
        with self.arm():
            self.assign_to(node.child_by_field_name("left"), value)
            self.loop(node.child_by_field_name("body"))
            self.stmt(node.child_by_field_name("alternative"))

    def with_statement(self, node: Node) -> None:
        for clause in node.named_children:
            if clause.type == "with_clause":
                for item in clause.named_children:
                    self.with_item(item)
            else:
                self.stmt(clause)

    def with_item(self, item: Node) -> None:
        """``with open(p) as f``: the name after ``as`` takes the context's taint; without one, it is read."""
        value = item.child_by_field_name("value")
        if value is None or value.type != "as_pattern":
            self.expr(value)
            return
        inner = value.named_children[0] if value.named_children else None
        self.assign_to(_as_target(value), self.expr(inner))

    def targets(self, node: Node | None) -> list[Node]:
        if node is None:
            return []
        if node.type in (
            "pattern_list",
            "tuple_pattern",
            "list_pattern",
            "tuple",
            "list",
            "parenthesized_expression",
        ):
            return [t for child in node.named_children for t in self.targets(child)]
        return [node]

    def assign_to(
        self, left: Node | None, value: Taint | None, *, join: bool = False, node: Node | None = None
    ) -> None:
        targets = self.targets(left)
        plain = len(targets) == 1 and not join  # ``x = ...``: x also takes the value's literal and shape
        for target in targets:
            if target.type != "identifier":
                self.store_into(target, value)
            elif plain:
                self.bind(node_text(target), node, value)
            else:
                self.assign(node_text(target), value, join=join)

    def store_into(self, target: Node, value: Taint | None) -> None:
        """An element or attribute assigned: its base holds the value, or a session's store is a flow."""
        if value is not None and target.type == "subscript" and _SESSION.search(self._holder(target)):
            line = target.start_point.row + 1  # ``session["user"] = x``: the session's store
            self.flow("trust_boundary", "session.store", line, "session[...]", value, "django|flask")
        else:
            self.store_in_base(target, value)

    def _holder(self, target: Node) -> str:
        """What a subscript assignment stores into (``flask.session`` of ``flask.session["k"] = v``)."""
        return node_text(target.child_by_field_name("value"))

    def parts(self, node: Node) -> tuple[str, Node | None, Sequence[Node]] | None:
        if node.type != "call":
            return None
        function = node.child_by_field_name("function")
        values = _argument_values(node.child_by_field_name("arguments"))
        if function is not None and function.type == "attribute":
            return (
                node_text(function.child_by_field_name("attribute")),
                function.child_by_field_name("object"),
                values,
            )
        return node_text(function).rsplit(".", 1)[-1], None, values

    def call_expression(self, node: Node) -> Taint | None:
        name, obj, values = self.parts(node) or ("", None, [])
        return self.call(node, name, obj, values)

    def assignment(self, node: Node) -> Taint | None:
        right = node.child_by_field_name("right")
        value = self.expr(right)
        augmented = node.type == "augmented_assignment"
        self.assign_to(node.child_by_field_name("left"), value, join=augmented, node=right)
        return value

    def walrus(self, node: Node) -> Taint | None:
        value = self.expr(node.child_by_field_name("value"))
        self.assign_to(node.child_by_field_name("name"), value)
        return value

    def conditional(self, node: Node) -> Taint | None:
        parts = node.named_children
        if len(parts) != 3:
            return join_taints(*(self.expr(child) for child in parts))
        self.expr(parts[1])
        decided = self.const(parts[1])
        if isinstance(decided, bool):
            return self.expr(parts[0] if decided else parts[2])
        return join_taints(self.guarded(parts[0], parts[1], True), self.guarded(parts[2], parts[1], False))

    def guarded(self, node: Node, condition: Node, holds: bool) -> Taint | None:
        """A side of a conditional expression, where its condition holds or fails (``q if q in ALLOWED else
        "/"``)."""
        saved = dict(self.env)
        self.guard(condition, holds)
        value = self.expr(node)
        self.env = saved
        return value

    def comprehension(self, node: Node) -> Taint | None:
        saved = dict(self.env)
        for clause in node.named_children:
            self.comprehension_clause(clause)
        body = node.child_by_field_name("body")
        result = self.expr(body) if body is not None else None
        self.env = saved
        return result

    def comprehension_clause(self, clause: Node) -> None:
        """A comprehension's ``for x in items`` binds ``x``; an ``if`` is read for the calls in it."""
        if clause.type == "for_in_clause":
            value = self.expr(clause.child_by_field_name("right"))
            self.assign_to(clause.child_by_field_name("left"), value)
        elif clause.type == "if_clause":  # its condition's calls are calls too (``if re.search(q, n)``)
            for condition in clause.named_children:
                self.expr(condition)


def _as_target(pattern: Node) -> Node | None:
    """What ``with ... as`` binds (the target inside its ``as_pattern_target``)."""
    alias = pattern.child_by_field_name("alias")
    return alias.named_children[0] if alias is not None and alias.named_children else alias


def _argument_values(args: Node | None) -> list[Node]:
    """A call's argument expressions (a keyword argument's value)."""
    return [
        a.child_by_field_name("value") or a if a.type == "keyword_argument" else a
        for a in (args.named_children if args else [])
    ]


_STATEMENTS: dict[str, Statement] = {
    "if_statement": PythonTracker.if_statement,
    "for_statement": PythonTracker.for_statement,
    "while_statement": PythonTracker.plain_loop,
    "try_statement": PythonTracker.try_statement,
    "with_statement": PythonTracker.with_statement,
    "return_statement": PythonTracker.return_statement,
}
_EXPRESSIONS: dict[str, Expression] = {
    "attribute": PythonTracker.member,
    "subscript": PythonTracker.member,
    "call": PythonTracker.call_expression,
    "assignment": PythonTracker.assignment,
    "augmented_assignment": PythonTracker.assignment,
    "named_expression": PythonTracker.walrus,
    "conditional_expression": PythonTracker.conditional,
    "list_comprehension": PythonTracker.comprehension,
    "generator_expression": PythonTracker.comprehension,
    "set_comprehension": PythonTracker.comprehension,
    "dictionary_comprehension": PythonTracker.comprehension,
}
PythonTracker.statements, PythonTracker.expressions = _STATEMENTS, _EXPRESSIONS

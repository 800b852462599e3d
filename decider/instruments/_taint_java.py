"""Java's statements and expressions for the taint tracker's walk (``_taint_tracker``)."""

from __future__ import annotations

from collections.abc import Sequence

from tree_sitter import Node

from ouroboros_gates.decider.instruments._taint_model import Taint, node_text, simple_type
from ouroboros_gates.decider.instruments._taint_tracker import Expression, Statement, Tracker

__all__ = ["JavaTracker"]

_DEFAULT = "<default>"


class JavaTracker(Tracker):
    """The walk over a Java method or constructor body."""

    def alternatives(self, alternatives: Sequence[Node]) -> None:
        for alternative in alternatives:
            self.stmt(alternative)

    def local(self, obj: Node | None) -> bool:
        """No receiver, ``this``, a new instance, or a class name."""
        if obj is None or obj.type in ("this", "object_creation_expression"):
            return True
        return obj.type == "identifier" and node_text(obj)[:1].isupper()

    def declaration(self, node: Node) -> None:
        for child in node.named_children:
            value = child.child_by_field_name("value") if child.type == "variable_declarator" else None
            if value is not None:
                self.bind(node_text(child.child_by_field_name("name")), value, self.expr(value))

    def resource(self, node: Node) -> None:
        value = node.child_by_field_name("value")
        if value is not None:
            self.bind(node_text(node.child_by_field_name("name")), value, self.expr(value))

    def switch(self, node: Node) -> None:
        """A switch on a known value runs the matching case to its ``break``; otherwise every case may run."""
        value = self.const(node.child_by_field_name("condition"))
        groups = _groups(node.child_by_field_name("body"))
        if value is None or not groups:
            self.loop(*node.named_children)
            return
        start = self.matching(groups, value)
        if start is not None:
            self.cases(groups[start:])

    def matching(self, groups: Sequence[Node], value: object) -> int | None:
        """The case group a value enters at: the one that names it, else the default (None: neither)."""
        labels = [self.labels(g) for g in groups]
        start = _labelled(labels, value)
        return start if start is not None else _labelled(labels, _DEFAULT)

    def cases(self, groups: Sequence[Node]) -> None:
        """Run case groups in order, falling through, up to the first ``break``."""
        for group in groups:
            for child in group.named_children:
                if child.type == "break_statement":
                    return
                if child.type != "switch_label":
                    self.stmt(child)

    def labels(self, group: Node) -> list[object]:
        """What a case group's labels match, in order (``default``: ``_DEFAULT``)."""
        found: list[object] = []
        for label in (c for c in group.named_children if c.type == "switch_label"):
            found.extend(self.label_values(label))
        return found

    def label_values(self, label: Node) -> list[object]:
        """What one ``case`` label matches (its constants), or ``_DEFAULT`` for ``default``."""
        return [self.const(c) for c in label.named_children] if label.named_children else [_DEFAULT]

    def foreach(self, node: Node) -> None:
        value = self.expr(node.child_by_field_name("value"))
        with self.arm():
            self.assign(node_text(node.child_by_field_name("name")), value)
            self.loop(node.child_by_field_name("body"))

    def parts(self, node: Node) -> tuple[str, Node | None, Sequence[Node]] | None:
        if node.type != "method_invocation":
            return None
        args = node.child_by_field_name("arguments")
        name = node_text(node.child_by_field_name("name"))
        return name, node.child_by_field_name("object"), args.named_children if args else []

    def method_call(self, node: Node) -> Taint | None:
        name, obj, args = self.parts(node) or ("", None, [])
        return self.call(node, name, obj, args)

    def new(self, node: Node) -> Taint | None:
        if any(c.type == "class_body" for c in node.named_children):
            return None
        args = node.child_by_field_name("arguments")
        name = simple_type(node.child_by_field_name("type"))
        return self.call(node, name, None, args.named_children if args else [])

    def field(self, node: Node) -> Taint | None:
        return self.expr(node.child_by_field_name("object"))

    def index(self, node: Node) -> Taint | None:
        self.expr(node.child_by_field_name("index"))
        return self.expr(node.child_by_field_name("array"))

    def assignment(self, node: Node) -> Taint | None:
        right = node.child_by_field_name("right")
        value = self.expr(right)
        left = node.child_by_field_name("left")
        plain = node_text(node.child_by_field_name("operator")) == "="
        if left is not None and left.type == "identifier":
            if plain:
                self.bind(node_text(left), right, value)
            else:
                self.assign(node_text(left), value, join=True)
        else:
            self.store_in_base(left, value)
        return value

    def cast(self, node: Node) -> Taint | None:
        return self.expr(node.child_by_field_name("value"))


def _groups(body: Node | None) -> list[Node]:
    """A switch body's case groups (``case 1: case 2: ...``; none in a switch of arrow rules)."""
    return [g for g in body.named_children if g.type == "switch_block_statement_group"] if body else []


def _labelled(labels: list[list[object]], label: object) -> int | None:
    """The first case group whose labels include ``label``."""
    return next((i for i, found in enumerate(labels) if label in found), None)


_STATEMENTS: dict[str, Statement] = {
    "local_variable_declaration": JavaTracker.declaration,
    "if_statement": JavaTracker.if_statement,
    "switch_expression": JavaTracker.switch,
    "switch_statement": JavaTracker.switch,
    "while_statement": JavaTracker.plain_loop,
    "for_statement": JavaTracker.plain_loop,
    "do_statement": JavaTracker.plain_loop,
    "enhanced_for_statement": JavaTracker.foreach,
    "try_statement": JavaTracker.try_statement,
    "try_with_resources_statement": JavaTracker.try_statement,
    "resource": JavaTracker.resource,
    "return_statement": JavaTracker.return_statement,
}
_EXPRESSIONS: dict[str, Expression] = {
    "method_invocation": JavaTracker.method_call,
    "object_creation_expression": JavaTracker.new,
    "field_access": JavaTracker.field,
    "array_access": JavaTracker.index,
    "ternary_expression": JavaTracker.ternary,
    "assignment_expression": JavaTracker.assignment,
    "cast_expression": JavaTracker.cast,
    "instanceof_expression": JavaTracker.nothing,
    "update_expression": JavaTracker.nothing,
}
JavaTracker.statements, JavaTracker.expressions = _STATEMENTS, _EXPRESSIONS

"""JavaScript's and TypeScript's statements and expressions for the taint tracker's walk (``_taint_tracker``).

A nested function (an arrow function, a callback) is a function of its own, walked on its own with its
parameters as sources, as Python's nested definitions are; the walk of the function around it skips it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tree_sitter import Node

from ouroboros_gates.decider.instruments._taint_model import Taint, join_taints, node_text
from ouroboros_gates.decider.instruments._taint_tracker import Expression, Statement, Tracker

__all__ = ["JavaScriptTracker", "pattern_names"]


def pattern_names(node: Node | None) -> list[str]:
    """The names a binding pattern binds: ``x``, ``{ a, b: c }``, ``[d, ...e]``, ``f = 1``."""
    if node is None:
        return []
    names = _PATTERNS.get(node.type)
    return names(node) if names is not None else []


def _own_name(node: Node) -> list[str]:
    """``x``, ``{ a }``: the name itself."""
    return [node_text(node)]


def _wrapped_names(node: Node) -> list[str]:
    """``b: c``, ``f = 1``, a TypeScript parameter: what the pattern it wraps binds."""
    return pattern_names(node.child_by_field_name(_WRAPPED[node.type]))


def _nested_names(node: Node) -> list[str]:
    """``{ a, b: c }``, ``[d, ...e]``: what each part binds, in order."""
    return [name for child in node.named_children for name in pattern_names(child)]


_WRAPPED = {
    "pair_pattern": "value",
    "assignment_pattern": "left",
    "object_assignment_pattern": "left",
    "required_parameter": "pattern",
    "optional_parameter": "pattern",
}
"""The patterns that wrap another (``b: c``, ``f = 1``, a TypeScript parameter): the field it is in."""
_PATTERNS: dict[str, Callable[[Node], list[str]]] = {
    **dict.fromkeys(("identifier", "shorthand_property_identifier_pattern"), _own_name),
    **dict.fromkeys(_WRAPPED, _wrapped_names),
    **dict.fromkeys(("object_pattern", "array_pattern", "rest_pattern"), _nested_names),
}
"""How each kind of binding pattern's names are read."""


def _arguments(call: Node) -> list[Node]:
    """A call's or a ``new``'s argument expressions."""
    args = call.child_by_field_name("arguments")
    return [a for a in (args.named_children if args else []) if a.type != "comment"]


def _method_parts(call: Node, function: Node) -> tuple[str, Node | None, Sequence[Node]]:
    """``obj.name(...)``: the property called, its object and the arguments."""
    return (
        node_text(function.child_by_field_name("property")),
        function.child_by_field_name("object"),
        _arguments(call),
    )


def _function_parts(call: Node, function: Node) -> tuple[str, Node | None, Sequence[Node]]:
    """``name(...)``, ``import(...)``: the name called, no receiver, and the arguments."""
    return node_text(function), None, _arguments(call)


_CALLEES: dict[str, Callable[[Node, Node], tuple[str, Node | None, Sequence[Node]]]] = {
    "member_expression": _method_parts,
    "identifier": _function_parts,
    "import": _function_parts,
}
"""How a call is read by what it calls (any other callee, a call's result or an IIFE: not a named call)."""


class JavaScriptTracker(Tracker):
    """The walk over a JavaScript or TypeScript function body."""

    members = frozenset({"member_expression", "subscript_expression"})

    def local(self, obj: Node | None) -> bool:
        """No receiver, or ``this``."""
        return obj is None or obj.type == "this"

    def alternatives(self, alternatives: Sequence[Node]) -> None:
        for alternative in alternatives:
            self.stmt(alternative)

    def bind_pattern(self, target: Node | None, value_node: Node | None, value: Taint | None) -> None:
        """Assign a declaration's or an assignment's target: a name takes the value, a destructuring pattern
        gives each name it binds the whole value's taint."""
        if target is not None and target.type == "identifier":
            self.bind(node_text(target), value_node, value)
            return
        for name in pattern_names(target):
            self.assign(name, value)

    def declaration(self, node: Node) -> None:
        for declarator in node.named_children:
            if declarator.type != "variable_declarator":
                continue
            value = declarator.child_by_field_name("value")
            if value is not None:
                self.bind_pattern(declarator.child_by_field_name("name"), value, self.expr(value))

    def for_in(self, node: Node) -> None:
        """``for (const k of items)`` / ``for (k in object)``: each turn binds the left to part of the
        right."""
        value = self.expr(node.child_by_field_name("right"))
        with self.arm():
            self.bind_pattern(node.child_by_field_name("left"), None, value)
            self.loop(node.child_by_field_name("body"))

    def parts(self, node: Node) -> tuple[str, Node | None, Sequence[Node]] | None:
        function = node.child_by_field_name("function") if node.type == "call_expression" else None
        if function is None:
            return None
        read = _CALLEES.get(function.type)
        return read(node, function) if read is not None else None

    def call_expression(self, node: Node) -> Taint | None:
        found = self.parts(node)
        if found is not None:
            return self.call(node, *found)
        self.expr(node.child_by_field_name("function"))  # a call of a call's result, an IIFE: its arguments
        return join_taints(*(self.expr(v) for v in _arguments(node)))  # still reach nothing named

    def new(self, node: Node) -> Taint | None:
        constructor = node.child_by_field_name("constructor")
        return self.call(node, node_text(constructor).rsplit(".", 1)[-1], None, _arguments(node))

    def assignment(self, node: Node) -> Taint | None:
        right = node.child_by_field_name("right")
        value = self.expr(right)
        left = node.child_by_field_name("left")
        if node.type == "assignment_expression":
            self.assign_plain(left, right, value)
        elif left is not None and left.type == "identifier":
            self.assign(node_text(left), value, join=True)  # ``q += input``
        return value

    def assign_plain(self, left: Node | None, right: Node | None, value: Taint | None) -> None:
        """``a = b``: the target takes the value; a member assigned (``o.f = b``) also taints the object it is
        rooted at."""
        self.bind_pattern(left, right, value)
        if left is not None and left.type in self.members:
            self.store_in_base(left, value)


_STATEMENTS: dict[str, Statement] = {
    "statement_block": JavaScriptTracker.children,
    "lexical_declaration": JavaScriptTracker.declaration,
    "variable_declaration": JavaScriptTracker.declaration,
    "if_statement": JavaScriptTracker.if_statement,
    "for_statement": JavaScriptTracker.plain_loop,
    "for_in_statement": JavaScriptTracker.for_in,
    "while_statement": JavaScriptTracker.plain_loop,
    "do_statement": JavaScriptTracker.plain_loop,
    "switch_statement": JavaScriptTracker.plain_loop,
    "try_statement": JavaScriptTracker.try_statement,
    "return_statement": JavaScriptTracker.return_statement,
}
_EXPRESSIONS: dict[str, Expression] = {
    "call_expression": JavaScriptTracker.call_expression,
    "new_expression": JavaScriptTracker.new,
    "member_expression": JavaScriptTracker.member,
    "subscript_expression": JavaScriptTracker.member,
    "assignment_expression": JavaScriptTracker.assignment,
    "augmented_assignment_expression": JavaScriptTracker.assignment,
    "ternary_expression": JavaScriptTracker.ternary,
}
JavaScriptTracker.statements, JavaScriptTracker.expressions = _STATEMENTS, _EXPRESSIONS

"""The tests a function makes: every atomic condition of its ``if``/``elif``/``while``/``for`` conditions,
conditional expressions and assertions, with ``and``/``or`` (``&&``/``||``) split into their operands.

A fix most often adds a test (a bounds check before a copy, a null check after an allocation, a length
check before an index); the change that undoes it removes one. The delta instrument compares the count in
the function at base with the count at head (``delta.tests``): on a push, a change that removes a test is
a removed guard whatever the language.
"""

from __future__ import annotations

from tree_sitter import Node

from ouroboros_gates.decider.languages import syntax_tree

__all__ = ["count_tests"]

_CONDITIONAL = frozenset(
    {
        "if_statement",
        "elif_clause",
        "while_statement",
        "do_statement",
        "for_statement",
        "conditional_expression",
        "ternary_expression",
        "assert_statement",
    }
)
_LOGICAL = frozenset({"&&", "||", "and", "or"})


def _condition(node: Node) -> Node | None:
    found = node.child_by_field_name("condition")
    if found is not None:
        return found
    named = node.named_children
    if node.type == "assert_statement":
        return named[0] if named else None
    if node.type == "conditional_expression" and len(named) == 3:  # Python: ``a if test else b``
        return named[1]
    return None


def _atoms(node: Node) -> int:
    """Atomic tests in one condition: ``and``/``or`` and parentheses are looked through."""
    value = node.child_by_field_name("value") if node.type == "condition_clause" else None
    if value is not None:  # C++ ``if (init; test)``: the test alone
        return _atoms(value)
    if node.type in ("parenthesized_expression", "condition_clause") and node.named_children:
        return sum(_atoms(child) for child in node.named_children if child.type != "comment")
    if _is_logical(node):
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        return sum(_atoms(side) for side in (left, right) if side is not None)
    return 1


def _is_logical(node: Node) -> bool:
    """``a and b``, ``a || b``: a boolean or binary expression of a logical operator."""
    operator = node.child_by_field_name("operator")
    return (
        node.type in ("boolean_operator", "binary_expression")
        and operator is not None
        and operator.type in _LOGICAL
    )


def count_tests(language: str, source: str) -> int:
    """The number of atomic tests in a function's source (its conditions and assertions)."""
    total = 0
    stack = [syntax_tree(language, source)]
    while stack:
        node = stack.pop()
        if node.type in _CONDITIONAL:
            condition = _condition(node)
            total += _atoms(condition) if condition is not None else 0
        stack.extend(node.children)
    return total

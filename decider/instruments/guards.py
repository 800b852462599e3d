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
    positional = _POSITIONAL.get(node.type)
    return positional(node.named_children) if positional is not None else None


def _asserted(named: list[Node]) -> Node | None:
    """``assert test, message``: the first child."""
    return named[0] if named else None


def _python_test(named: list[Node]) -> Node | None:
    """Python's ``a if test else b``: the middle child."""
    return named[1] if len(named) == 3 else None


_POSITIONAL = {"assert_statement": _asserted, "conditional_expression": _python_test}
"""Where the condition is of the tests whose grammar gives it no ``condition`` field."""


def _atoms(node: Node) -> int:
    """Atomic tests in one condition: ``and``/``or`` and parentheses are looked through."""
    value = _clause_test(node)
    if value is not None:  # C++ ``if (init; test)``: the test alone
        return _atoms(value)
    if _is_group(node):
        return _group_atoms(node)
    if _is_logical(node):
        return _operand_atoms(node)
    return 1


def _clause_test(node: Node) -> Node | None:
    """The test of a C++ condition clause (``if (init; test)``), when it has that field."""
    return node.child_by_field_name("value") if node.type == "condition_clause" else None


def _is_group(node: Node) -> bool:
    """Parentheses or a condition clause around something: looked through."""
    return node.type in ("parenthesized_expression", "condition_clause") and bool(node.named_children)


def _group_atoms(node: Node) -> int:
    """The atomic tests of what parentheses or a condition clause hold (comments left out)."""
    return sum(_atoms(child) for child in node.named_children if child.type != "comment")


def _operand_atoms(node: Node) -> int:
    """The atomic tests of both sides of ``a and b``, ``a || b``."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    return sum(_atoms(side) for side in (left, right) if side is not None)


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

"""The literal values the taint tracker folds: a literal's value, and a side-effect-free expression over
literals and known locals (a condition the walk can decide)."""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from ouroboros_gates.decider.instruments._taint_model import node_text

__all__ = ["constant", "fold", "fold_unary", "literal", "operator_of"]


def operator_of(node: Node) -> str:
    op = node.child_by_field_name("operator")
    return (
        node_text(op) if op is not None else next((node_text(c) for c in node.children if not c.is_named), "")
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_ARITHMETIC: dict[str, Callable[[int, int], object]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a // b if b else None,
    "%": lambda a, b: a % b if b else None,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
}
_LOGIC: dict[str, Callable[[bool, bool], bool]] = {
    "&&": lambda a, b: a and b,
    "and": lambda a, b: a and b,
    "||": lambda a, b: a or b,
    "or": lambda a, b: a or b,
}


def fold(op: str, left: object, right: object) -> object:
    """A binary operator over two known literals (ints, strings, booleans), else None."""
    if left is None or right is None:
        return None
    if op in ("==", "!="):
        return (left == right) == (op == "==")
    return _fold_typed(op, left, right)


def _fold_typed(op: str, left: object, right: object) -> object:
    """Arithmetic and comparison over ints, ``+`` over strings, logic over booleans; None otherwise."""
    if _is_int(left) and _is_int(right) and op in _ARITHMETIC:
        return _ARITHMETIC[op](left, right)  # type: ignore[arg-type]
    if isinstance(left, str) and isinstance(right, str) and op == "+":
        return left + right
    if isinstance(left, bool) and isinstance(right, bool) and op in _LOGIC:
        return _LOGIC[op](left, right)
    return None


def fold_unary(text: str, inner: object) -> object:
    if text.startswith(("!", "not")):
        return (not inner) if isinstance(inner, bool) else None
    return -inner if text.startswith("-") and _is_int(inner) else None  # type: ignore[operator]


def constant(node: Node | None, consts: dict[str, object]) -> object:
    """The literal value of a side-effect-free expression over literals and the locals ``consts`` knows (a
    condition the walk can decide), else None."""
    if node is None:
        return None
    kind = node.type
    if kind == "identifier":
        return consts.get(node_text(node))
    if kind == "parenthesized_expression":
        return constant(node.named_children[0], consts) if node.named_children else None
    if kind in ("binary_expression", "binary_operator", "comparison_operator", "boolean_operator"):
        return _binary(node, consts)
    if kind in ("unary_expression", "not_operator", "unary_operator"):
        inner = constant(node.child_by_field_name("operand") or node.child_by_field_name("argument"), consts)
        return fold_unary(node_text(node), inner)
    if kind == "method_invocation" and node_text(node.child_by_field_name("name")) == "charAt":
        return _char_at(node, consts)
    return literal(node)


def _binary(node: Node, consts: dict[str, object]) -> object:
    children = node.named_children
    if len(children) != 2:
        return None
    return fold(operator_of(node), constant(children[0], consts), constant(children[1], consts))


def _char_at(node: Node, consts: dict[str, object]) -> object:
    """Java's ``"abc".charAt(1)`` over known values."""
    base = constant(node.child_by_field_name("object"), consts)
    args = node.child_by_field_name("arguments")
    index = constant(args.named_children[0], consts) if args and len(args.named_children) == 1 else None
    if isinstance(base, str) and isinstance(index, int) and 0 <= index < len(base):
        return base[index]
    return None


def literal(node: Node) -> object:
    kind = node.type
    text = (node.text or b"").decode("utf-8", "replace")
    if kind in ("decimal_integer_literal", "integer"):
        return _integer(text)
    if kind in ("true", "false"):
        return kind == "true"
    if kind == "character_literal":
        return text[1:-1] if len(text) == 3 else None
    if _plain_string(node):
        return _unquoted(text)
    return None


def _integer(text: str) -> int | None:
    try:
        return int(text.rstrip("lL").replace("_", ""))
    except ValueError:
        return None


def _plain_string(node: Node) -> bool:
    """A string literal without interpolation (PHP's "..." without a variable in it)."""
    kind = node.type
    return (
        kind == "string_literal"
        or (kind == "string" and not any(c.type == "interpolation" for c in node.named_children))
        or (kind == "encapsed_string" and all(c.type == "string_content" for c in node.named_children))
    )


def _unquoted(text: str) -> str | None:
    """A quoted string's content (None: not quoted alike at both ends, or with an escape in it)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        inner = text[1:-1]
        return inner if "\\" not in inner else None
    return None

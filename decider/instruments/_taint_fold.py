"""The literal values the taint tracker folds: a literal's value, and a side-effect-free expression over
literals and known locals (a condition the walk can decide)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tree_sitter import Node

from ouroboros_gates.decider.instruments._taint_model import node_text

__all__ = ["between_quotes", "constant", "fold", "fold_unary", "literal", "operator_of"]


def operator_of(node: Node) -> str:
    op = node.child_by_field_name("operator")
    return (
        node_text(op) if op is not None else next((node_text(c) for c in node.children if not c.is_named), "")
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _quotient(a: int, b: int) -> int:
    """Integer division as Java and C do it, toward zero (``-7 / 2`` is -3; the remainder takes the
    dividend's sign)."""
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


_ARITHMETIC: dict[str, Callable[[int, int], object]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: _quotient(a, b) if b else None,
    "%": lambda a, b: a - b * _quotient(a, b) if b else None,
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
_OPERATORS: dict[type, Mapping[str, Callable[..., object]]] = {
    int: _ARITHMETIC,
    str: {"+": lambda a, b: a + b},
    bool: _LOGIC,
}
"""The operators folded over two values of one type (a bool is no int here)."""


def fold(op: str, left: object, right: object) -> object:
    """A binary operator over two known literals (ints, strings, booleans), else None."""
    if left is None or right is None:
        return None
    if op in ("==", "!="):
        return (left == right) == (op == "==")
    return _fold_typed(op, left, right)


def _fold_typed(op: str, left: object, right: object) -> object:
    """Arithmetic and comparison over ints, ``+`` over strings, logic over booleans; None otherwise."""
    operators = _OPERATORS.get(type(left)) if type(left) is type(right) else None
    folded = operators.get(op) if operators is not None else None
    return folded(left, right) if folded is not None else None


def fold_unary(text: str, inner: object) -> object:
    """A unary operator (``text``: the expression as written) over a known literal, else None."""
    if text.startswith(("!", "not")):
        return _negated(inner)
    return _minus(inner) if text.startswith("-") else None


def _negated(inner: object) -> object:
    """``!b``, ``not b`` over a boolean."""
    return (not inner) if isinstance(inner, bool) else None


def _minus(inner: object) -> object:
    """``-n`` over an int."""
    return -inner if _is_int(inner) else None  # type: ignore[operator]


def constant(node: Node | None, consts: dict[str, object]) -> object:
    """The literal value of a side-effect-free expression over literals and the locals ``consts`` knows (a
    condition the walk can decide), else None."""
    if node is None:
        return None
    value_of = _VALUE_OF.get(node.type)
    return value_of(node, consts) if value_of is not None else literal(node)


def _local(node: Node, consts: dict[str, object]) -> object:
    """A local's known literal."""
    return consts.get(node_text(node))


def _parenthesized(node: Node, consts: dict[str, object]) -> object:
    return constant(node.named_children[0], consts) if node.named_children else None


def _binary(node: Node, consts: dict[str, object]) -> object:
    children = node.named_children
    if len(children) != 2:
        return None
    return fold(operator_of(node), constant(children[0], consts), constant(children[1], consts))


def _unary(node: Node, consts: dict[str, object]) -> object:
    inner = constant(node.child_by_field_name("operand") or node.child_by_field_name("argument"), consts)
    return fold_unary(node_text(node), inner)


def _method_value(node: Node, consts: dict[str, object]) -> object:
    """A Java method call's value: only ``charAt`` is folded."""
    return _char_at(node, consts) if node_text(node.child_by_field_name("name")) == "charAt" else None


def _char_at(node: Node, consts: dict[str, object]) -> object:
    """Java's ``"abc".charAt(1)`` over known values."""
    base = constant(node.child_by_field_name("object"), consts)
    args = node.child_by_field_name("arguments")
    index = constant(args.named_children[0], consts) if args and len(args.named_children) == 1 else None
    return _char_of(base, index)


def _char_of(base: object, index: object) -> object:
    """``base[index]`` when a known string is read at a known index in range, else None."""
    if isinstance(base, str) and isinstance(index, int) and 0 <= index < len(base):
        return base[index]
    return None


_VALUE_OF: dict[str, Callable[[Node, dict[str, object]], object]] = {
    "identifier": _local,
    "parenthesized_expression": _parenthesized,
    **dict.fromkeys(
        ("binary_expression", "binary_operator", "comparison_operator", "boolean_operator"), _binary
    ),
    **dict.fromkeys(("unary_expression", "not_operator", "unary_operator"), _unary),
    "method_invocation": _method_value,
}
"""How the value of each kind of expression is folded (any other node: its literal value)."""


def literal(node: Node) -> object:
    """A literal's value: an integer, a boolean, a character or a plain string (None: not one of these)."""
    kind = node.type
    text = (node.text or b"").decode("utf-8", "replace")
    if kind in ("true", "false"):
        return kind == "true"
    read = _LITERAL_OF.get(kind)
    if read is not None:
        return read(text)
    return _unquoted(text.lstrip(_TEXT_PREFIXES)) if _plain_string(node) else None


_TEXT_PREFIXES = "rRuUfF"
"""A Python string's prefixes that keep it text (``r"/items"``: the same string); ``b"..."`` is bytes."""


def _character(text: str) -> str | None:
    """A character literal's character (``'a'``)."""
    return text[1:-1] if len(text) == 3 else None


def _integer(text: str) -> int | None:
    try:
        return int(text.rstrip("lL").replace("_", ""))
    except ValueError:
        return None


_LITERAL_OF: dict[str, Callable[[str], object]] = {
    "decimal_integer_literal": _integer,
    "integer": _integer,
    "character_literal": _character,
}
"""How a number's or a character's text is read."""


def _plain_string(node: Node) -> bool:
    """A string literal without interpolation (PHP's "..." without a variable in it)."""
    plain = _PLAIN_STRINGS.get(node.type)
    return plain is not None and plain(node)


def _always_plain(node: Node) -> bool:
    """Java's string literal (its text blocks are another kind)."""
    return True


def _uninterpolated(node: Node) -> bool:
    """A ``string`` (Python's, JavaScript's, PHP's single-quoted) with no interpolation in it."""
    return not any(c.type == "interpolation" for c in node.named_children)


def _text_only(node: Node) -> bool:
    """PHP's double-quoted string: only text in it, no variable."""
    return all(c.type == "string_content" for c in node.named_children)


_PLAIN_STRINGS: dict[str, Callable[[Node], bool]] = {
    "string_literal": _always_plain,
    "string": _uninterpolated,
    "encapsed_string": _text_only,
}
"""Per kind of string literal: whether one is plain (nothing interpolated into it)."""


def _unquoted(text: str) -> str | None:
    """A quoted string's content (None: not quoted alike at both ends, or with an escape in it)."""
    inner = between_quotes(text)
    return inner if inner is not None and "\\" not in inner else None


def between_quotes(text: str) -> str | None:
    """What a literal holds between its quotes, as written (None: not quoted alike at both ends)."""
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'" else None

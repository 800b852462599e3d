"""Validation in conditions: what a test proves about a variable where it holds (or where it fails).

``if name.isdigit():`` makes ``name`` safe inside the branch; ``if not name.isdigit(): abort(400)`` makes it
safe after the ``if``, because the branch that would have used it unchecked never comes back. The tests are
the vocabulary's validators (``[[validator]]`` in ``ruleset/taint/<language>.toml``): a call whose truth
proves its subject (a receiver or an argument: a plain variable, or an element or field of one, ``$octet[0]``,
``parts[0]``) safe for some operations; a pattern test
counts only when its pattern is anchored at both ends. ``not``/``!``, ``and``/``&&`` and ``or``/``||`` are
followed (where a conjunction holds both sides hold; where a disjunction fails both sides fail); anything
else proves nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from tree_sitter import Node

from ouroboros_gates.decider.instruments._taint_fold import between_quotes, operator_of
from ouroboros_gates.decider.instruments._taint_model import Entry, TaintVocabulary, node_text

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Parts", "exits", "is_element", "is_path_of", "validated"]

Parts = Callable[[Node], "tuple[str, Node | None, Sequence[Node]] | None"]
"""A language's reading of a call: its name, its receiver and its arguments (None: not a call)."""

_NEGATIONS = frozenset({"not_operator", "unary_expression", "unary_op_expression"})
_BINARY = frozenset({"boolean_operator", "binary_expression"})
_AND, _OR = frozenset({"and", "&&"}), frozenset({"or", "||"})
_VARIABLES = frozenset({"identifier", "variable_name"})
_PATHS = frozenset(
    {
        "subscript",
        "attribute",
        "subscript_expression",
        "member_expression",
        "member_access_expression",
        "field_access",
        "array_access",
    }
)
"""An element or a field (``a[0]``, ``a.b``, ``$a->b``): validated, it is tracked apart from its variable."""
_JUMPS = frozenset(
    {
        "return_statement",
        "raise_statement",
        "throw_statement",
        "continue_statement",
        "break_statement",
        "exit_statement",
        "throw_expression",
    }
)
_STOPS = frozenset({"abort", "exit", "die", "_exit"})
"""Calls that do not come back (``abort(403)``, ``sys.exit()``, ``exit()``)."""


Proved = dict[str, tuple[frozenset[str], Node]]
"""What a condition proves: per variable, element or field (by its text), the operations and the subject's
node."""


def validated(
    vocab: TaintVocabulary, parts: Parts, made_by: Mapping[str, str], node: Node | None, holds: bool
) -> Proved:
    """The variables (or elements of one) ``node`` proves safe, with the operations, where it evaluates to
    ``holds`` (``made_by``: the call each local was bound to, for a validator that wants its subject made by
    one: a resolved path)."""
    if node is None:
        return {}
    if _is_wrapped(node):
        return validated(vocab, parts, made_by, node.named_children[-1], holds)
    if _is_negation(node):
        return validated(vocab, parts, made_by, _operand(node), not holds)
    if _is_logical(node):
        return _logical(vocab, parts, made_by, node, holds)
    compared = _compared(node, holds)
    if compared is not None:
        return compared
    return _called(vocab, parts, made_by, node) if holds else {}


def _is_wrapped(node: Node) -> bool:
    """A condition in parentheses or in a ``condition_clause`` (C++'s ``if``): the test is its last child."""
    return node.type in ("parenthesized_expression", "condition_clause") and bool(node.named_children)


def _is_negation(node: Node) -> bool:
    """``!x``, ``not x``."""
    return node.type in _NEGATIONS and operator_of(node) in ("!", "not")


def _operand(negation: Node) -> Node:
    inner = negation.child_by_field_name("argument") or negation.child_by_field_name("operand")
    return inner or negation.named_children[-1]


def _is_logical(node: Node) -> bool:
    """``a and b``, ``a || b``: a binary expression of a logical operator."""
    return node.type in _BINARY and len(node.named_children) == 2 and operator_of(node) in _AND | _OR


def _logical(
    vocab: TaintVocabulary, parts: Parts, made_by: Mapping[str, str], node: Node, holds: bool
) -> Proved:
    """``a and b`` where it holds, ``a or b`` where it fails: what both sides prove."""
    if _both_sides_known(operator_of(node), holds):
        return _joined(*(validated(vocab, parts, made_by, side, holds) for side in node.named_children))
    return {}


def _both_sides_known(op: str, holds: bool) -> bool:
    """Whether each side of a logical operator is known: both hold where ``and`` does, both fail where ``or``
    does."""
    return (op in _AND and holds) or (op in _OR and not holds)


def _called(vocab: TaintVocabulary, parts: Parts, made_by: Mapping[str, str], node: Node) -> Proved:
    """What a validator's call proves where it holds."""
    found = parts(node)
    if found is None:
        return {}
    name, receiver, args = found
    proved: Proved = {}
    for validator in vocab.validators:
        subject = _proved_subject(validator, name, receiver, args, made_by)
        if subject is None:
            continue
        key = node_text(subject)
        proved[key] = (proved.get(key, (frozenset(), subject))[0] | validator.operations, subject)
    return proved


def _proved_subject(
    validator: Entry, name: str, receiver: Node | None, args: Sequence[Node], made_by: Mapping[str, str]
) -> Node | None:
    """What one validator proves safe by this call (None: the call is not it, or not on a subject it
    wants)."""
    if not _validates(validator, name, receiver, args):
        return None
    subject = _subject(validator, receiver, args)
    return subject if subject is not None and _made_as_wanted(validator, subject, made_by) else None


def _validates(validator: Entry, name: str, receiver: Node | None, args: Sequence[Node]) -> bool:
    """Whether the call is the validator (with an anchored pattern first, when it wants one)."""
    if not validator.applies(name, node_text(receiver)):
        return False
    return not validator.anchored or (bool(args) and _anchored(_pattern(args[0])))


def _subject(validator: Entry, receiver: Node | None, args: Sequence[Node]) -> Node | None:
    """What the validator's call proves safe: its receiver or an argument, if a variable or a path."""
    subject = receiver if validator.subject == "receiver" else _checked_argument(validator, args)
    return subject if subject is not None and _is_subject(subject) else None


def _checked_argument(validator: Entry, args: Sequence[Node]) -> Node | None:
    """The argument a validator checks: the first its ``args`` names, else the first (None: not passed)."""
    index = validator.args[0] if validator.args else 0
    return args[index] if index < len(args) else None


def _made_as_wanted(validator: Entry, subject: Node, made_by: Mapping[str, str]) -> bool:
    """Whether the subject was made by the call the validator wants (``made_by``), when it wants one."""
    return validator.made_by is None or bool(validator.made_by.search(made_by.get(node_text(subject), "")))


def _is_subject(node: Node) -> bool:
    return node.type in _VARIABLES or node.type in _PATHS


_EQUAL = frozenset({"==", "===", "is"})
_UNEQUAL = frozenset({"!=", "!==", "is not"})
_LITERALS = frozenset({"string", "string_literal", "integer", "number", "true", "false", "none", "null"})
_COLLECTIONS = frozenset({"list", "tuple", "set", "dictionary", "array", "frozenset"})


def _compared(node: Node, holds: bool) -> Proved | None:
    """What a comparison proves: ``x in ALLOWED`` (an allow-list: a literal collection, or a constant's name)
    and ``x == "literal"`` prove ``x`` safe for every operation where they hold (``not in`` and ``!=`` where
    they fail). None when ``node`` is no such comparison."""
    if not _is_comparison(node):
        return None
    checked = _checked(node, holds)
    if checked is None:
        return None
    subject, ok = checked
    return _proved_safe(subject) if ok else {}


def _proved_safe(subject: Node) -> Proved:
    """What a passing allow-list or equality test proves of the side it checks: a parsed URL's variable for
    requests and redirects (its host was checked), else the subject for every operation."""
    url = _url_of_host(subject)
    if url is not None:
        return {node_text(url): (_HOST_CHECKED, url)}
    return {node_text(subject): (frozenset({"*"}), subject)} if _is_subject(subject) else {}


def _is_comparison(node: Node) -> bool:
    """A comparison of two operands (``x in A``, ``x == "a"``; not Python's chained ``a < b < c``)."""
    return node.type in ("comparison_operator", "binary_expression") and len(node.named_children) == 2


def _checked(node: Node, holds: bool) -> tuple[Node, bool] | None:
    """The side a membership or equality test checks, and whether the test proves it where it ``holds``
    (against an allow-list or a plain literal, either side of ``==``). None for another operator."""
    op = _comparison(node)
    left, right = node.named_children
    if op in ("in", "not in"):
        return _membership(op, left, right, holds)
    if op in _EQUAL | _UNEQUAL:
        return _equality(op, left, right, holds)
    return None


def _membership(op: str, left: Node, right: Node, holds: bool) -> tuple[Node, bool]:
    """``x in ALLOWED`` proves ``x`` where it holds, ``x not in ALLOWED`` where it fails (an allow-list)."""
    return left, holds == (op == "in") and _allow_list(right)


def _equality(op: str, left: Node, right: Node, holds: bool) -> tuple[Node, bool]:
    """``x == "a"`` (or ``"a" == x``) proves ``x`` where it holds, ``!=`` where it fails (a plain literal)."""
    if left.type in _LITERALS:
        left, right = right, left
    return left, holds == (op in _EQUAL) and _plain_literal(right)


def _comparison(node: Node) -> str:
    """A comparison's operator (Python's ``not in``, ``is not``: one node of its own)."""
    found = node.child_by_field_name("operators")
    return found.type if found is not None else operator_of(node)


def _plain_literal(node: Node) -> bool:
    """A literal without interpolation."""
    return node.type in _LITERALS and not any(c.type == "interpolation" for c in node.named_children)


_HOST_CHECKED = frozenset({"outbound_request", "redirect"})
_URL_PARSERS = frozenset(
    {"urlparse", "urlsplit", "urllib.parse.urlparse", "urllib.parse.urlsplit", "parse.urlparse"}
)
_HOST_PARTS = ("hostname", "netloc")


def _url_of_host(node: Node) -> Node | None:
    """The URL variable whose host (or scheme and host) a comparison tests: ``urlparse(url).hostname in
    ALLOWED_HOSTS`` proves ``url`` safe to request or redirect to, for nothing else."""
    found = _arguments(_parse_call(node))
    return found[0] if len(found) == 1 and found[0].type in _VARIABLES else None


def _reads_host(node: Node) -> bool:
    """``….hostname``, ``….netloc``: an attribute read of a URL's host."""
    return node.type == "attribute" and node_text(node.child_by_field_name("attribute")) in _HOST_PARTS


def _arguments(call: Node | None) -> list[Node]:
    """A call's arguments, comments aside (none without a call)."""
    args = call.child_by_field_name("arguments") if call is not None else None
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


def _parse_call(node: Node) -> Node | None:
    """The URL parser's call whose host ``node`` reads (``urlparse(url).hostname``, ``.netloc``)."""
    if not _reads_host(node):
        return None
    call = node.child_by_field_name("object")
    if call is None or call.type != "call":
        return None
    return call if node_text(call.child_by_field_name("function")) in _URL_PARSERS else None


def _allow_list(node: Node) -> bool:
    """A literal collection of literals, or a constant's name (``ALLOWED_HOSTS``,
    ``settings.ALLOWED_HOSTS``)."""
    if node.type in _COLLECTIONS:
        return all(child.type in _LITERALS or child.type == "pair" for child in node.named_children)
    return _is_constant_name(node)


def _is_constant_name(node: Node) -> bool:
    """A name in capitals, plain or an attribute's (``ALLOWED_HOSTS``, ``settings.ALLOWED_HOSTS``)."""
    last = node_text(node).rsplit(".", 1)[-1]
    return node.type in ("identifier", "attribute") and last.isupper() and len(last) > 1


def _joined(left: Proved, right: Proved) -> Proved:
    """What both sides of a condition prove: a subject either side proves, for the operations of both."""
    joined = dict(left)
    for name, (operations, subject) in right.items():
        joined[name] = (joined[name][0] | operations if name in joined else operations, subject)
    return joined


def is_element(subject: Node) -> bool:
    """Whether a subject ``validated`` proved is an element or a field (``$octet[0]``), not a plain
    variable."""
    return subject.type in _PATHS


def is_path_of(path: str, name: str) -> bool:
    """Whether ``path`` (an element or field's text) reads the variable ``name``: ``$a[0]`` and ``$a->b`` of
    ``$a``."""
    return path.startswith((name + "[", name + ".", name + "->"))


def _pattern(node: Node) -> str | None:
    """A pattern written as one string literal, as written (``r"^\\d+$"``, ``'/^[a-z]+$/i'``), without its
    quotes."""
    if not _is_constant_string(node):
        return None
    return between_quotes((node.text or b"").decode("utf-8", "replace").lstrip("rRbBuU"))


def _is_constant_string(node: Node) -> bool:
    """A string literal with nothing interpolated into it."""
    return node.type in ("string", "string_literal", "encapsed_string") and not any(
        child.type in ("interpolation", "variable_name", "template_substitution")
        for child in node.named_children
    )


def _anchored(pattern: object) -> bool:
    """A regular expression (PHP's with its delimiters) that must match the whole value."""
    if not isinstance(pattern, str) or len(pattern) < 2:
        return False
    body = _undelimited(pattern)
    return body.startswith(("^", "\\A")) and body.endswith(("$", "\\Z", "\\z"))


def _undelimited(pattern: str) -> str:
    """A pattern without PHP's delimiters (``/^[a-z]+$/i``: ``^[a-z]+$``); any other as it is."""
    if pattern[0] in "/#~!@%|+" and pattern[0] in pattern[1:]:
        return pattern[1 : pattern.rindex(pattern[0])]
    return pattern


def exits(node: Node | None, parts: Parts) -> bool:
    """Whether a branch never comes back: it ends in a return, a raise or throw, a break or continue, an exit,
    or a call that stops the request (``abort(404)``)."""
    if node is None:
        return False
    last = _last_statement(node)
    if last.type in _JUMPS:
        return True
    inner = _expression_of(last)
    if inner.type in _JUMPS:
        return True
    called = parts(inner)
    return called is not None and called[0] in _STOPS


def _expression_of(statement: Node) -> Node:
    """The expression an expression statement holds (any other statement: itself)."""
    if statement.type == "expression_statement" and statement.named_children:
        return statement.named_children[0]
    return statement


def _last_statement(node: Node) -> Node:
    """A block's last statement (comments aside); any other node itself."""
    statements = [
        c for c in node.named_children if c.type not in ("comment", "line_comment", "block_comment")
    ]
    if node.type in ("block", "compound_statement", "statement_block") and statements:
        return statements[-1]
    return node

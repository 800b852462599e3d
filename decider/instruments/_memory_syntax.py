"""What a C or C++ function's syntax tree says, for the memory step (``_memory_tracker``): the names and
access paths an expression reads, assignments, the tests and bounds conditions make, sums and casts. Where a
freed pointer is read again is ``_memory_free``'s."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from tree_sitter import Node

from ouroboros_gates.decider.instruments._taint_model import node_text

__all__ = [
    "CONSTANT",
    "NULLS",
    "arguments",
    "assignments",
    "bounded",
    "callee",
    "check_call",
    "clamped",
    "declared",
    "evaluated",
    "identifiers",
    "is_length",
    "names",
    "params",
    "paths",
    "reads_memory",
    "relational",
    "summands",
    "tainted",
    "tests",
    "unwrapped",
    "walk",
]

_TESTS = frozenset(
    {"if_statement", "while_statement", "do_statement", "for_statement", "conditional_expression"}
)
NULLS = frozenset({"NULL", "nullptr", "0"})
_RELATIONAL = frozenset({"<", "<=", ">", ">="})
_IDENTIFIERS = frozenset({"identifier"})
_UNEVALUATED = frozenset({"sizeof_expression", "alignof_expression"})  # ``sizeof(*p)`` reads nothing
_READS_NOTHING = _UNEVALUATED | {"field_identifier"}


def _read_within(node: Node) -> list[Node]:
    """The children whose values reading ``node`` reads: a call's arguments (its name is not a value it
    reads), nothing of ``sizeof`` or of a field's name, else every child."""
    if node.type == "call_expression":
        arguments = node.child_by_field_name("arguments")
        return [arguments] if arguments is not None else []
    if node.type in _READS_NOTHING:
        return []
    return node.children


def identifiers(node: Node | None) -> Iterator[Node]:
    if node is None:
        return
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in _IDENTIFIERS:
            yield current
        else:
            stack.extend(_read_within(current))


def names(node: Node | None) -> set[str]:
    return {node_text(n) for n in identifiers(node)}


def paths(node: Node | None) -> set[str]:
    """The access paths a value reads: each identifier, and each field access as a whole (``p->len``, not
    ``p``), with the indices inside it; what a call computes is read through its arguments."""
    found: set[str] = set()
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if current.type == "identifier":
            found.add(node_text(current))
        elif current.type == "field_expression":
            found.add("".join(node_text(current).split()))
            stack.extend(_indices(current))
        else:
            stack.extend(_read_within(current))
    return found


def _indices(node: Node) -> list[Node]:
    """The index expressions of the subscripts within ``node``."""
    return [
        i
        for s in walk(node)
        if s.type == "subscript_expression"
        for i in [s.child_by_field_name("index")]
        if i is not None
    ]


def declared(node: Node | None) -> str | None:
    """The name a declarator declares (through pointers, references, arrays and initialisers)."""
    while node is not None and node.type not in ("identifier", "field_identifier"):
        node = _inner_declarator(node)
    return node_text(node) if node is not None else None


def _inner_declarator(node: Node) -> Node | None:
    """The declarator ``node`` wraps: its ``declarator`` field, else its first declarator or name."""
    inner = node.child_by_field_name("declarator")
    if inner is not None:
        return inner
    return next((c for c in node.named_children if _is_declarator(c)), None)


def _is_declarator(node: Node) -> bool:
    """A declarator of any kind, or the name it comes down to."""
    return node.type.endswith("declarator") or node.type == "identifier"


_PARAMETERS = ("parameter_declaration", "optional_parameter_declaration")


def params(function: Node) -> list[str]:
    names = (
        declared(p.child_by_field_name("declarator"))
        for p in _parameter_list(function)
        if p.type in _PARAMETERS
    )
    return [name for name in names if name]


def _parameter_list(function: Node) -> list[Node]:
    """The children of a function definition's parameter list (none when it has no function declarator)."""
    declarator = _function_declarator(function)
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    return parameters.named_children if parameters else []


def _function_declarator(function: Node) -> Node | None:
    """A definition's ``function_declarator``, through the pointer and reference declarators around it."""
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def evaluated(node: Node) -> Iterator[Node]:
    """``walk`` without what is never evaluated (the operand of ``sizeof``)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if current.type not in _UNEVALUATED:
            stack.extend(reversed(current.children))


def assignments(body: Node) -> list[tuple[str, Node, int]]:
    """(target name, value expression, line) of every assignment and initialiser in the body."""
    out = []
    for node in walk(body):
        split = _ASSIGNMENTS.get(node.type)
        if split is None:
            continue
        target, value = split(node)
        if target and value is not None:
            out.append((target, value, node.start_point.row + 1))
    return out


def _initialiser(node: Node) -> tuple[str | None, Node | None]:
    """``int n = v``: the name declared and its initial value."""
    return declared(node.child_by_field_name("declarator")), node.child_by_field_name("value")


def _assignment(node: Node) -> tuple[str | None, Node | None]:
    """``n = v``: the name assigned (None for ``p->f = v``, ``a[i] = v``) and the value."""
    left = node.child_by_field_name("left")
    target = node_text(left) if left is not None and left.type == "identifier" else None
    return target, node.child_by_field_name("right")


_ASSIGNMENTS = {"init_declarator": _initialiser, "assignment_expression": _assignment}
"""How each kind of assignment splits into its target and its value."""


_READS = frozenset({"call_expression", "field_expression", "subscript_expression", "pointer_expression"})


def reads_memory(value: Node) -> bool:
    """Whether a value is read from memory or returned by a call (data the function did not compute)."""
    return any(n.type in _READS for n in walk(value))


def tainted(seeds: Iterable[str], assignments: list[tuple[str, Node, int]]) -> set[str]:
    tainted = set(seeds)
    while _spread(tainted, assignments):
        pass
    return tainted


def _spread(tainted: set[str], assignments: list[tuple[str, Node, int]]) -> bool:
    """One pass over the assignments: each target assigned from a tainted name is tainted (in ``tainted``);
    whether any was new."""
    changed = False
    for target, value, _ in assignments:
        if target not in tainted and names(value) & tainted:
            tainted.add(target)
            changed = True
    return changed


def relational(node: Node) -> bool:
    return node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) in _RELATIONAL


def bounded(condition: Node) -> set[str]:
    """Access paths an operand of a relational comparison (``<``, ``<=``, ``>``, ``>=``) in a condition
    reads."""
    found: set[str] = set()
    for node in walk(condition):
        if relational(node):
            found |= paths(node)
    return found


def check_call(node: Node) -> Node | None:
    """The arguments of an assertion, or of a call given a size comparison (a checking macro such as
    ``CHECK_RETURN(len > max, ...)``)."""
    if node.type != "call_expression":
        return None
    arguments = node.child_by_field_name("arguments")
    if "assert" in node_text(node.child_by_field_name("function")).lower():
        return arguments
    if _given_comparison(arguments):
        return arguments
    return None


def _given_comparison(arguments: Node | None) -> bool:
    """Whether one of a call's arguments is a size comparison (``len > max``)."""
    return arguments is not None and any(relational(a) for a in arguments.named_children)


def tests(body: Node) -> list[tuple[int, set[str], set[str]]]:
    """(line, names tested, access paths compared by size) of every condition and checking call."""
    out = []
    for node in walk(body):
        condition = node.child_by_field_name("condition") if node.type in _TESTS else check_call(node)
        if condition is not None:
            out.append((node.start_point.row + 1, names(condition), bounded(condition)))
    return out


def unwrapped(node: Node) -> Node:
    """An expression through casts and parentheses."""
    while node.type in ("parenthesized_expression", "cast_expression") and node.named_children:
        node = node.named_children[-1]
    return node


_LENGTHS = frozenset({"strlen", "strnlen", "wcslen", "wcsnlen"})
CONSTANT = frozenset({"number_literal", "sizeof_expression", "char_literal"})
_MIN = frozenset({"min", "MIN", "min_t", "umin", "Min", "MagickMin"})


def clamped(node: Node) -> bool:
    """Whether a value is a ``min(...)`` (clamped to a bound), through casts and parentheses."""
    node = unwrapped(node)
    return node.type == "call_expression" and callee(node) in _MIN


def summands(node: Node) -> Iterator[Node]:
    """The terms of a sum (``a + b + 1``: a, b, 1), through casts and parentheses."""
    node = unwrapped(node)
    if node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) == "+":
        for child in node.named_children:
            yield from summands(child)
    else:
        yield node


def is_length(node: Node) -> bool:
    """Whether a node is a call of ``strlen`` or its kin."""
    return node.type == "call_expression" and callee(node) in _LENGTHS


def arguments(call: Node) -> list[Node]:
    """A call's argument expressions (comments left out)."""
    return [a for a in (call.child_by_field_name("arguments") or call).named_children if a.type != "comment"]


def callee(node: Node) -> str:
    return (
        node_text(node.child_by_field_name("function"))
        .rsplit("::", 1)[-1]
        .rsplit(".", 1)[-1]
        .rsplit("->", 1)[-1]
    )

"""Where a freed pointer is read again, for the memory step (``_memory_tracker``): the access path a
``free``/``delete`` releases, and the first read of it after the free that the function can reach."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from ouroboros_gates.decider.instruments._memory_syntax import arguments, walk
from ouroboros_gates.decider.instruments._taint_model import node_text

__all__ = ["freed_paths", "statement_of", "use_after"]

_EXITS = frozenset({"return_statement", "goto_statement", "break_statement", "continue_statement"})


def freed_paths(node: Node) -> list[str]:
    """The access path a ``free``/``delete`` releases (its first argument, through casts and ``&``)."""
    argument = _uncast(_released(node))
    if argument is None or argument.type not in ("identifier", "field_expression"):
        return []
    return ["".join(node_text(argument).split())]


def _released(node: Node) -> Node | None:
    """The operand of a ``delete``, or the first argument of a ``free(...)`` call, as written."""
    if node.type == "delete_expression":
        return _deleted(node)
    return _first_argument(node)


def _deleted(node: Node) -> Node | None:
    """The operand of ``delete p`` (its last child)."""
    return node.named_children[-1] if node.named_children else None


def _first_argument(call: Node) -> Node | None:
    """A call's first argument, comments left out (``free(/* ... */ p)`` frees ``p``)."""
    given = arguments(call) if call.child_by_field_name("arguments") is not None else []
    return given[0] if given else None


def _uncast(node: Node | None) -> Node | None:
    """An operand through casts and parentheses (None when one of them is empty)."""
    while node is not None and node.type in ("cast_expression", "parenthesized_expression"):
        node = node.named_children[-1] if node.named_children else None
    return node


def statement_of(node: Node) -> Node:
    """The statement ``node`` is part of (its ancestor whose parent is a compound statement)."""
    while node.parent is not None and node.parent.type != "compound_statement":
        node = node.parent
    return node


def use_after(body: Node, freed_at: Node, path: str) -> Node | None:
    """The first read of ``path`` after it is freed, on a path the function can take: in source order, before
    anything assigns ``path`` again; a block that leaves (``return``, ``goto``, ``break``, ``continue``) after
    the free reaches no use beyond it."""
    for node in _reads_after(body, freed_at, path):
        if _assigned(node):
            return None  # assigned again first: a new object from here on
        if not _in_sizeof(node):
            return node
    return None


def _reads_after(body: Node, freed_at: Node, path: str) -> Iterator[Node]:
    """The nodes that spell ``path`` after the free, up to the limit of what the free reaches, in order."""
    limit = _reach_limit(body, statement_of(freed_at))
    for node in walk(body):
        if _reachable(node, freed_at, limit) and _is_path(node, path):
            yield node


def _reachable(node: Node, freed_at: Node, limit: int | None) -> bool:
    """Whether ``node`` starts after the free and before the limit of what it reaches."""
    return node.start_byte >= freed_at.end_byte and (limit is None or node.start_byte < limit)


def _is_path(node: Node, path: str) -> bool:
    """Whether ``node`` is a name or a field access that spells the access path ``path``."""
    return node.type in ("identifier", "field_expression") and "".join(node_text(node).split()) == path


def _in_sizeof(node: Node) -> bool:
    """Whether ``node`` is the operand of ``sizeof``, which reads nothing."""
    return node.parent is not None and node.parent.type == "sizeof_expression"


def _reach_limit(body: Node, statement: Node) -> int | None:
    """Where the uses a free can reach end: at a statement that leaves the block after it (None: the
    function's own block, or no such statement)."""
    block = statement.parent
    if block is None:
        return None
    leaving = _leaving_after(block, statement)
    return leaving.start_byte if leaving is not None and block is not body else None


def _leaving_after(block: Node, statement: Node) -> Node | None:
    """The first statement of ``block`` after ``statement`` that leaves it (``return``, ``goto``, ...)."""
    return next(
        (c for c in block.named_children if c.start_byte >= statement.end_byte and c.type in _EXITS), None
    )


def _assigned(node: Node) -> bool:
    """Whether ``node`` is the left side of an assignment."""
    parent = node.parent
    return (
        parent is not None
        and parent.type == "assignment_expression"
        and parent.child_by_field_name("left") == node
    )

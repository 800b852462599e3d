"""The lists and maps a function builds and uses with literal indexes and keys, followed element by element
(``items.add(x); items.get(0)``): a container's shape when it is made, and each operation on it."""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from ouroboros_gates.decider.instruments._taint_model import UNHANDLED, Taint, join_taints, simple_type

__all__ = ["container_shape", "list_op", "map_op"]


def container_shape(node: Node) -> list[Taint | None] | dict[object, Taint | None] | None:
    """An empty list or map made here (``new ArrayList<>()``, ``[]``, ``{}``), else None."""
    made = simple_type(node.child_by_field_name("type")) if node.type == "object_creation_expression" else ""
    if _makes_list(node, made):
        return []
    if _makes_map(node, made):
        return {}
    return None


def _makes_list(node: Node, made: str) -> bool:
    """``new ArrayList<>()`` (a list, vector, deque or stack: ``made`` is the type created) or ``[]``."""
    return made.endswith(("List", "Vector", "Deque", "Stack")) or (
        node.type == "list" and not node.named_children
    )


def _makes_map(node: Node, made: str) -> bool:
    """``new HashMap<>()`` (a map, hashtable or properties: ``made`` is the type created) or ``{}``."""
    return made.endswith(("Map", "Hashtable", "Properties")) or (
        node.type == "dictionary" and not node.named_children
    )


def list_op(slot: list[Taint | None], name: str, keys: list[object], values: list[Taint | None]) -> object:
    """One operation on a followed list: an append, or one at a literal index (``UNHANDLED``: another)."""
    if name in ("add", "addLast", "append", "offer") and len(values) == 1:
        slot.append(values[0])
        return None
    index = _int_key(keys)
    return UNHANDLED if index is None else _indexed(slot, name, index, keys, values)


def _indexed(
    slot: list[Taint | None], name: str, index: int, keys: list[object], values: list[Taint | None]
) -> object:
    """An operation at a known index: ``add``/``insert`` a value there, ``remove``/``pop``/``get`` its
    element."""
    if name in ("add", "insert") and len(values) == 2:
        return _insert(slot, index, values[1])
    if name in ("remove", "pop", "get") and len(keys) == 1:
        return _at(slot, name, index)
    return UNHANDLED


def _int_key(keys: list[object]) -> int | None:
    first = keys[0] if keys else None
    return first if isinstance(first, int) and not isinstance(first, bool) else None


def _insert(slot: list[Taint | None], index: int, value: Taint | None) -> object:
    if not 0 <= index <= len(slot):
        return UNHANDLED
    slot.insert(index, value)
    return None


def _at(slot: list[Taint | None], name: str, index: int) -> object:
    """``get`` (None out of range), or ``remove``/``pop`` of an element in range."""
    if name == "get":
        return slot[index] if -len(slot) <= index < len(slot) else None
    return slot.pop(index) if 0 <= index < len(slot) else UNHANDLED


def map_op(
    slot: dict[object, Taint | None], name: str, keys: list[object], values: list[Taint | None]
) -> object:
    """One operation on a followed map with a literal key (``UNHANDLED``: another)."""
    key = keys[0] if keys else None
    operation = _MAP_OPS.get(name)
    if key is None or operation is None:
        return UNHANDLED
    return operation(slot, key, values)


def _put(slot: dict[object, Taint | None], key: object, values: list[Taint | None]) -> object:
    if len(values) != 2:
        return UNHANDLED
    slot[key] = values[1]
    return None


def _get(slot: dict[object, Taint | None], key: object, values: list[Taint | None]) -> object:
    return slot.get(key)


def _remove(slot: dict[object, Taint | None], key: object, values: list[Taint | None]) -> object:
    return slot.pop(key, None)


def _get_or_default(slot: dict[object, Taint | None], key: object, values: list[Taint | None]) -> object:
    """The value under ``key``, else what it may hold joined with the default."""
    if len(values) != 2:
        return UNHANDLED
    return join_taints(slot.get(key), values[1]) if key not in slot else slot[key]


_MAP_OPS: dict[str, Callable[[dict[object, Taint | None], object, list[Taint | None]], object]] = {
    "put": _put,
    "get": _get,
    "remove": _remove,
    "getOrDefault": _get_or_default,
}
"""The map operations followed key by key."""

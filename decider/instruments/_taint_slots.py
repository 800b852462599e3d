"""The lists and maps a function builds and uses with literal indexes and keys, followed element by element
(``items.add(x); items.get(0)``): a container's shape when it is made, and each operation on it."""

from __future__ import annotations

from tree_sitter import Node

from ouroboros_gates.decider.instruments._taint_model import UNHANDLED, Taint, join_taints, simple_type

__all__ = ["container_shape", "list_op", "map_op"]


def container_shape(node: Node) -> list[Taint | None] | dict[object, Taint | None] | None:
    """An empty list or map made here (``new ArrayList<>()``, ``[]``, ``{}``), else None."""
    made = simple_type(node.child_by_field_name("type")) if node.type == "object_creation_expression" else ""
    if made.endswith(("List", "Vector", "Deque", "Stack")) or (
        node.type == "list" and not node.named_children
    ):
        return []
    if made.endswith(("Map", "Hashtable", "Properties")) or (
        node.type == "dictionary" and not node.named_children
    ):
        return {}
    return None


def list_op(slot: list[Taint | None], name: str, keys: list[object], values: list[Taint | None]) -> object:
    if name in ("add", "addLast", "append", "offer") and len(values) == 1:
        slot.append(values[0])
        return None
    index = _int_key(keys)
    if index is None:
        return UNHANDLED
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
    key = keys[0] if keys else None
    if key is None:
        return UNHANDLED
    if name == "put" and len(values) == 2:
        slot[key] = values[1]
        return None
    if name in ("get", "remove"):
        return slot.pop(key, None) if name == "remove" else slot.get(key)
    if name == "getOrDefault" and len(values) == 2:
        return join_taints(slot.get(key), values[1]) if key not in slot else slot[key]
    return UNHANDLED

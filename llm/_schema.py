"""A JSON Schema check for model replies: the subset constrained decoding speaks (OpenAI strict mode, Ollama
``format``, vLLM and llama.cpp grammars), with local ``$ref``s. Returns the first violation, or None."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["violation"]

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def violation(value: Any, schema: dict[str, Any]) -> str | None:
    """Where and how ``value`` breaks ``schema`` (``/path: why``), or None when it conforms."""
    return _check(value, schema, schema, "")


def _check(value: Any, schema: dict[str, Any] | bool, root: dict[str, Any], path: str) -> str | None:
    if schema is True or schema == {}:
        return None
    if schema is False:
        return f"{_where(path)}: no value is allowed here"
    assert isinstance(schema, dict)
    if "$ref" in schema:
        return _check(value, _resolve(schema["$ref"], root), root, path)
    return _first_problem(check(value, schema, root, path) for check in _CHECKS)


def _first_problem(problems: Iterable[str | None]) -> str | None:
    """The first problem found (the rest are not looked for), or None."""
    for problem in problems:
        if problem:
            return problem
    return None


def _where(path: str) -> str:
    """A value's path as a message names it: ``/`` for the whole reply."""
    return path or "/"


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    if not ref.startswith("#"):
        raise ValueError(f"only local $ref are supported, not {ref!r}")
    node: Any = root
    for part in filter(None, ref[1:].split("/")):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return dict(node)


def _is(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES[name])


def _is_number(value: Any) -> bool:
    """Whether ``value`` is a JSON number (``true`` and ``false`` are not, though Python counts them ints)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_type(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str) -> str | None:
    wanted = schema.get("type")
    if wanted is None:
        return None
    names = [wanted] if isinstance(wanted, str) else list(wanted)
    if any(_is(value, name) for name in names):
        return None
    return f"{_where(path)}: expected {' or '.join(names)}, got {type(value).__name__}"


def _check_enum(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str) -> str | None:
    if "enum" in schema and value not in schema["enum"]:
        return f"{_where(path)}: {value!r} is not one of {schema['enum']!r}"
    return None


def _check_const(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str) -> str | None:
    if "const" in schema and value != schema["const"]:
        return f"{_where(path)}: {value!r} is not {schema['const']!r}"
    return None


def _check_scalar(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str) -> str | None:
    """A string's length and pattern, a number's bounds."""
    if isinstance(value, str):
        return _check_string(value, schema, _where(path))
    if _is_number(value) and _outside(value, schema):
        return f"{_where(path)}: {value!r} is outside the schema's bounds"
    return None


def _check_string(value: str, schema: dict[str, Any], where: str) -> str | None:
    if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", len(value)):
        return f"{where}: length {len(value)} is outside the schema's bounds"
    if "pattern" in schema and not re.search(schema["pattern"], value):
        return f"{where}: {value!r} does not match {schema['pattern']!r}"
    return None


_BOUNDS: tuple[tuple[str, Callable[[float, float], bool]], ...] = (
    ("minimum", operator.lt),
    ("exclusiveMinimum", operator.le),
    ("maximum", operator.gt),
    ("exclusiveMaximum", operator.ge),
)
"""Each bound a number may have, and how a number breaks it."""


def _outside(value: float, schema: dict[str, Any]) -> bool:
    return any(breaks(value, schema[key]) for key, breaks in _BOUNDS if key in schema)


def _check_object(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str) -> str | None:
    if not isinstance(value, dict):
        return None
    if missing := _missing_required(value, schema):
        return f"{_where(path)}: missing required {missing[0]!r}"
    return _check_properties(value, schema, root, path)


def _missing_required(value: dict[str, Any], schema: dict[str, Any]) -> list[Any]:
    """The required properties ``value`` lacks, in the schema's order."""
    return [name for name in schema.get("required", []) if name not in value]


def _check_properties(
    value: dict[str, Any], schema: dict[str, Any], root: dict[str, Any], path: str
) -> str | None:
    """Each property against its schema, or ``additionalProperties`` for one the schema does not name."""
    properties: dict[str, Any] = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        sub = properties.get(name, extra)
        if sub is False:
            return f"{_where(path)}: unexpected property {name!r}"
        if problem := _check(item, sub, root, f"{path}/{name}"):
            return problem
    return None


def _check_array(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str) -> str | None:
    if not isinstance(value, list):
        return None
    if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
        return f"{_where(path)}: {len(value)} items is outside the schema's bounds"
    items = schema.get("items", True)
    return _first_problem(_check(item, items, root, f"{path}/{index}") for index, item in enumerate(value))


def _check_all_of(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str) -> str | None:
    return _first_problem(_check(value, sub, root, path) for sub in schema.get("allOf", []))


def _check_alternatives(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str) -> str | None:
    """``anyOf``: a value that matches none of the alternatives; ``oneOf``: one that matches none, or more
    than one."""
    if "anyOf" in schema and all(_check(value, sub, root, path) for sub in schema["anyOf"]):
        return f"{_where(path)}: matches none of anyOf"
    if "oneOf" in schema:
        matched = sum(_check(value, sub, root, path) is None for sub in schema["oneOf"])
        if matched != 1:
            return f"{_where(path)}: matches {matched or 'none'} of oneOf"
    return None


_CHECKS: tuple[Callable[[Any, dict[str, Any], dict[str, Any], str], str | None], ...] = (
    _check_type,
    _check_enum,
    _check_const,
    _check_scalar,
    _check_object,
    _check_array,
    _check_all_of,
    _check_alternatives,
)
"""The checks of one schema, in the order they are made: the first problem is the one reported."""

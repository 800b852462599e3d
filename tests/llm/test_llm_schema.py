"""The reply schema check's value constraints: enum, const, string lengths and patterns, number bounds."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ouroboros_gates.llm._schema import violation

NUMBER = {
    "type": "object",
    "properties": {
        "low": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
        "high": {"type": "integer", "exclusiveMinimum": 0, "maximum": 10},
    },
}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"low": 0, "high": 10}, None),
        ({"low": 0.5, "high": 1}, None),
        ({"low": -0.1}, "/low: -0.1 is outside the schema's bounds"),
        ({"low": 1}, "/low: 1 is outside the schema's bounds"),
        ({"high": 0}, "/high: 0 is outside the schema's bounds"),
        ({"high": 11}, "/high: 11 is outside the schema's bounds"),
        ({"low": math.nan}, None),  # no comparison with NaN holds: no bound is broken
        ({"low": True}, "/low: expected number, got bool"),
    ],
)
def test_number_bounds(value: dict[str, Any], expected: str | None) -> None:
    assert violation(value, NUMBER) == expected


@pytest.mark.parametrize(
    ("value", "schema", "expected"),
    [
        ("b", {"enum": ["a", "c"]}, "/: 'b' is not one of ['a', 'c']"),
        (2, {"const": 1}, "/: 2 is not 1"),
        ("ab", {"minLength": 3}, "/: length 2 is outside the schema's bounds"),
        ("abcd", {"maxLength": 3}, "/: length 4 is outside the schema's bounds"),
        ("abc", {"minLength": 3, "maxLength": 3, "pattern": "^a"}, None),
        ("xbc", {"pattern": "^a"}, "/: 'xbc' does not match '^a'"),
        ("5", {"minimum": 10}, None),  # bounds constrain numbers only
    ],
)
def test_values(value: Any, schema: dict[str, Any], expected: str | None) -> None:
    assert violation(value, schema) == expected

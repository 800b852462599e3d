"""A predicate's facts, each with the one derivation that first produced it, and the hash indexes
the compiled plans read, built on first use and kept current as facts are added."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter

from ouroboros_gates.miners.datalog.syntax import Value

__all__ = ["Derivation", "Given", "Index", "Relation", "Row", "values_at"]

Row = tuple[Value, ...]
"""A fact's arguments."""

Index = defaultdict[object, list[object]]
"""Rows grouped by their values at some positions (the value for one position, a tuple for more): the
rows themselves, or, in a projected index, each row's value at its one other position."""


@dataclass(frozen=True, slots=True)
class Given:
    """How an extensional fact is known: given, with the caller's span (opaque to the engine)."""

    span: object


Derivation = Given | tuple[Value, ...]
"""``Given`` for an extensional fact; ``(rule index, *witness values)`` for a derived one."""


def values_at(positions: list[int]) -> Callable[[tuple[Value, ...]], Row]:
    """The values at ``positions`` of a tuple, always as a tuple (``itemgetter`` gives a bare value for one
    position)."""
    if len(positions) == 1:
        (position,) = positions
        return lambda values: (values[position],)
    if not positions:
        return lambda _values: ()
    return itemgetter(*positions)


class Relation:
    """The facts of one predicate, in the order they were found, with their derivations."""

    __slots__ = ("_indexes", "rows")

    def __init__(self) -> None:
        self.rows: dict[Row, Derivation] = {}
        self._indexes: dict[
            tuple[tuple[int, ...], int | None], tuple[Callable[[Row], object], Index, Callable[[Row], object]]
        ] = {}

    def index(self, positions: tuple[int, ...], projected: int | None = None) -> Index:
        """The index on ``positions``, built now if no plan asked for it before; with ``projected``, each
        entry holds the row's value at that position instead of the row (a join reading one more value
        saves a subscript per row it meets)."""
        entry = self._indexes.get((positions, projected))
        if entry is None:
            key: Callable[[Row], object] = itemgetter(*positions)
            value: Callable[[Row], object] = _whole if projected is None else itemgetter(projected)
            index: Index = defaultdict(list)
            for row in self.rows:
                index[key(row)].append(value(row))
            entry = self._indexes[(positions, projected)] = (key, index, value)
        return entry[1]

    def add(self, row: Row, derivation: Derivation) -> None:
        """Add one fact unless it is known already (the first derivation stays)."""
        if row not in self.rows:
            self.extend({row: derivation})

    def drop_indexes(self) -> None:
        """Free the indexes once evaluation is over: a model answers lookups by whole rows."""
        self._indexes.clear()

    def extend(self, new: dict[Row, Derivation]) -> None:
        """Add facts none of which is known yet, updating every index built so far."""
        self.rows.update(new)
        for key, index, value in self._indexes.values():
            if value is _whole:
                for row in new:
                    index[key(row)].append(row)
            else:
                for row in new:
                    index[key(row)].append(value(row))


def _whole(row: Row) -> Row:
    return row

"""A predicate's facts, each with the one derivation that first produced it, and the hash indexes
the compiled plans read, built on first use and kept current as facts are added."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter

from ouroboros_gates.miners.datalog.syntax import Value

__all__ = ["Derivation", "Given", "Index", "Relation", "Row"]

Row = tuple[Value, ...]
"""A fact's arguments."""

Index = defaultdict[object, list[Row]]
"""Rows grouped by their values at some positions: the value for one position, a tuple for more."""


@dataclass(frozen=True, slots=True)
class Given:
    """How an extensional fact is known: given, with the caller's span (opaque to the engine)."""

    span: object


Derivation = Given | tuple[Value, ...]
"""``Given`` for an extensional fact; ``(rule index, *witness values)`` for a derived one."""


class Relation:
    """The facts of one predicate, in the order they were found, with their derivations."""

    __slots__ = ("_indexes", "rows")

    def __init__(self) -> None:
        self.rows: dict[Row, Derivation] = {}
        self._indexes: dict[tuple[int, ...], tuple[Callable[[Row], object], Index]] = {}

    def index(self, positions: tuple[int, ...]) -> Index:
        """The index on ``positions``, built now if no plan asked for it before."""
        entry = self._indexes.get(positions)
        if entry is None:
            key: Callable[[Row], object] = itemgetter(*positions)
            index: Index = defaultdict(list)
            for row in self.rows:
                index[key(row)].append(row)
            entry = self._indexes[positions] = (key, index)
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
        for key, index in self._indexes.values():
            for row in new:
                index[key(row)].append(row)

"""Retrieve (docs/decider.md, "Retrieve"): stage 1 Gower nearest neighbours by instrument block with missing
kept explicit, stage 2 the code-embedding re-rank ``r = lam * (1 - D) + (1 - lam) * cos``, then the balance
rule.

``eligible(example, target, fold)`` (``decider.boundary``) is the only way an example reaches a prompt. The
distance is vectorised over the memory (numpy); ``gower`` is the same rule for one pair, written out for
reading and for tests.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ouroboros_gates.decider.boundary import Boundary, cosine, eligible, ineligible_reason
from ouroboros_gates.decider.memory import Memory, MemoryExample
from ouroboros_gates.schemas import InstrumentState, Scalar, State

__all__ = [
    "Boundary",
    "Column",
    "Index",
    "Neighbour",
    "Retrieved",
    "Settings",
    "Target",
    "balance",
    "columns_from_specs",
    "eligible",
    "gower",
    "ineligible_reason",
    "retrieve",
]

_STATES = {State.RAN: 0, State.NONE: 1, State.FAILED: 2, State.NOT_APPLICABLE: 3}


@dataclass(frozen=True)
class Column:
    """One feature as the distance sees it: its instrument block, and a numeric scale (cap) or categories."""

    name: str
    block: str
    cap: float | None = None  # numeric: |a - b| / cap; None: equal or not


def columns_from_specs(
    specs: Iterable[Any], *, profile: str = "static", priors: bool = False
) -> tuple[Column, ...]:
    """Columns of the allow-listed features of a profile; prior features are dropped with priors off."""
    return tuple(_column(spec) for spec in specs if _used(spec, profile, priors))


def _used(spec: Any, profile: str, priors: bool) -> bool:
    """Whether a feature is compared in this profile (static or the profile's; a prior's with priors on)."""
    if getattr(spec, "prior", False) and not priors:
        return False
    return getattr(spec, "profile", "static") in ("static", profile)


def _column(spec: Any) -> Column:
    """A feature's column: numeric ones scaled by their cap (1 without one), others categorical."""
    kind = str(getattr(spec, "type", getattr(spec, "kind", "")))
    cap = getattr(spec, "cap", None)
    numeric = kind in ("int", "float")
    scale = float(cap) if numeric and cap else 1.0
    return Column(spec.name, spec.instrument, scale if numeric else None)


def _state(instruments: Mapping[str, InstrumentState], block: str) -> State:
    found = instruments.get(block)
    return found.state if found is not None else State.NONE


def _feature_distance(a: Scalar, b: Scalar, column: Column) -> float:
    if a is None and b is None:
        return 0.0
    if a is None or b is None:
        return 1.0
    if column.cap is not None and isinstance(a, int | float) and isinstance(b, int | float):
        return min(abs(float(a) - float(b)) / column.cap, 1.0)
    return 0.0 if a == b else 1.0


def gower(
    a: tuple[Mapping[str, Scalar], Mapping[str, InstrumentState]],
    b: tuple[Mapping[str, Scalar], Mapping[str, InstrumentState]],
    columns: Sequence[Column],
) -> float:
    """D between two records ``(x, instruments)``: the mean over instrument blocks of each block's
    distance."""
    blocks: dict[str, list[Column]] = {}
    for column in columns:
        blocks.setdefault(column.block, []).append(column)
    total = sum(_block_distance(a, b, block, cols) for block, cols in blocks.items())
    return total / len(blocks) if blocks else 0.0


def _block_distance(
    a: tuple[Mapping[str, Scalar], Mapping[str, InstrumentState]],
    b: tuple[Mapping[str, Scalar], Mapping[str, InstrumentState]],
    block: str,
    cols: Sequence[Column],
) -> float:
    """One block's distance: the mean of its features' when both records ran it, else whether the states
    differ."""
    sa, sb = _state(a[1], block), _state(b[1], block)
    if sa is State.RAN and sb is State.RAN:
        return sum(_feature_distance(a[0].get(c.name), b[0].get(c.name), c) for c in cols) / len(cols)
    return 0.0 if sa is sb else 1.0


@dataclass(frozen=True)
class Target:
    """The candidate as retrieval sees it: features, states, family, group and excerpt vector."""

    x: Mapping[str, Scalar]
    instruments: Mapping[str, InstrumentState]
    family: str
    group: str | None = None
    vector: np.ndarray | None = None


@dataclass(frozen=True)
class Settings:
    """Retrieval's compiled settings (the defaults of docs/decider.md, "Retrieve")."""

    n1: int = 40
    k: int = 6
    lam: float = 0.5
    seed: int = 0


@dataclass(frozen=True)
class Neighbour:
    """One retrieved example with its distance, cosine (None without embeddings) and re-rank score."""

    example: MemoryExample
    distance: float
    cosine: float | None
    score: float


@dataclass(frozen=True)
class Retrieved:
    """What Retrieve returns, with how it went (``retrieval`` mode, ``balance``, what the boundary
    removed)."""

    neighbours: tuple[Neighbour, ...]
    retrieval: Literal["signals+embeddings", "signals_only"]
    balance: Literal["ok", "short"]
    dropped: Mapping[str, int] = field(default_factory=dict)
    pool: tuple[Neighbour, ...] = ()  # every eligible stage-2 example, re-ranked (the memory vote reads it)

    def counts(self) -> dict[str, dict[str, int]]:
        """Neighbours by label and by family (never identities)."""
        labels = Counter("vulnerable" if n.example.y else "not_vulnerable" for n in self.neighbours)
        families = Counter(n.example.family for n in self.neighbours)
        return {"label": dict(sorted(labels.items())), "family": dict(sorted(families.items()))}


class Index:
    """A memory encoded for the vectorised distance: values per column (NaN = null), states per block."""

    def __init__(self, memory: Memory, columns: Sequence[Column]) -> None:
        self.memory = memory
        self.version = memory.version
        self.columns = tuple(sorted(columns, key=lambda c: (c.block, c.name)))
        self.blocks = list(dict.fromkeys(c.block for c in self.columns))
        self.examples = memory.examples
        self._codes: list[dict[Any, float]] = [{} for _ in self.columns]
        self.values = self._values()
        self.states = self._states()
        self.starts = _block_starts(self.columns)
        self.widths = np.diff(np.append(self.starts, len(self.columns))).astype(np.float64)
        self.numeric = np.array([c.cap is not None for c in self.columns], dtype=bool)
        self.family = np.array([e.family for e in self.examples], dtype=object)
        self._ties: dict[int, np.ndarray] = {}
        self._matrix: np.ndarray | None = None
        self._matrix_version = -1

    def _values(self) -> np.ndarray:
        """The examples' encoded values, a row per example and a column per feature."""
        values: np.ndarray = np.array(
            [self._encode(e.example.x) for e in self.examples], dtype=np.float64
        ).reshape(len(self.examples), len(self.columns))
        return values

    def _states(self) -> np.ndarray:
        """The examples' instrument states, a row per example and a column per block."""
        states: np.ndarray = np.array(
            [[_STATES[_state(e.example.instruments, b)] for b in self.blocks] for e in self.examples],
            dtype=np.int8,
        ).reshape(len(self.examples), len(self.blocks))
        return states

    def _encode(self, x: Mapping[str, Scalar]) -> list[float]:
        row = []
        for i, column in enumerate(self.columns):
            value = x.get(column.name)
            if value is None:
                row.append(np.nan)
            elif column.cap is not None and isinstance(value, int | float):
                row.append(min(float(value), column.cap) / column.cap)
            else:
                row.append(self._codes[i].setdefault(value, float(len(self._codes[i]))))
        return row

    def distances(self, target: Target) -> np.ndarray:
        """D from the target to every example."""
        if not self.blocks:
            return np.zeros(len(self.examples))
        t = np.array(self._encode(target.x), dtype=np.float64)
        v = self.values
        nan_v, nan_t = np.isnan(v), np.isnan(t)
        with np.errstate(invalid="ignore"):
            d = np.where(self.numeric, np.minimum(np.abs(v - t), 1.0), (v != t).astype(np.float64))
        d = np.where(nan_v & nan_t, 0.0, np.where(nan_v | nan_t, 1.0, d))
        block_mean = np.add.reduceat(d, self.starts, axis=1) / self.widths if len(self.columns) else d
        ts = np.array([_STATES[_state(target.instruments, b)] for b in self.blocks], dtype=np.int8)
        both_ran = (self.states == 0) & (ts == 0)
        per_block = np.where(both_ran, block_mean, (self.states != ts).astype(np.float64))
        result: np.ndarray = per_block.mean(axis=1)
        return result

    def cosines(self, vector: np.ndarray | None) -> np.ndarray | None:
        """The cosine from a target's unit vector to every example's (0 where an example has none), or
        None."""
        if vector is None:
            return None
        matrix = self._vectors()
        if matrix is None or matrix.shape[1] != len(vector):
            return None
        result: np.ndarray = matrix @ vector.astype(np.float32)
        return result

    def _vectors(self) -> np.ndarray | None:
        """The examples' vectors as a matrix, stacked again when the memory changed (None: no vectors)."""
        if self._matrix is None or self._matrix_version != self.memory.version:
            self._matrix = _stacked([self.memory.vector(e) for e in self.examples])
            self._matrix_version = self.memory.version
        return self._matrix

    def ties(self, seed: int) -> np.ndarray:
        """The tie-break key per example: sha256(its content without instrument versions + seed)."""
        if seed not in self._ties:
            self._ties[seed] = np.array(
                [
                    int.from_bytes(hashlib.sha256(f"{e.tie_key}{seed}".encode()).digest()[:8], "big")
                    for e in self.examples
                ],
                dtype=np.uint64,
            )
        return self._ties[seed]


def _block_starts(columns: Sequence[Column]) -> np.ndarray:
    """The index of each block's first column (columns sorted by block)."""
    starts = [i for i, c in enumerate(columns) if i == 0 or columns[i - 1].block != c.block]
    return np.array(starts, dtype=np.intp)


def _stacked(rows: Sequence[np.ndarray | None]) -> np.ndarray | None:
    """The examples' vectors as a matrix, zeros for an example without one (None: no vector at all)."""
    dims = _dims(rows)
    if not dims or not rows:
        return None
    return np.stack([r if r is not None else np.zeros(dims, np.float32) for r in rows])


def _dims(rows: Sequence[np.ndarray | None]) -> int:
    """The vectors' dimension (0 when no example has a vector)."""
    return next((len(r) for r in rows if r is not None), 0)


def _walk(
    index: Index, order: np.ndarray, target: Target, fold: Boundary, n: int, dropped: Counter[str]
) -> Iterator[int]:
    taken = 0
    for i in order:
        if taken >= n:
            return
        example = index.examples[i]
        reason = ineligible_reason(example, target, fold, index.memory.vector(example))
        if reason is None:
            taken += 1
            yield int(i)
        else:
            dropped[reason] += 1


def retrieve(index: Index, target: Target, fold: Boundary, settings: Settings = Settings()) -> Retrieved:
    """Stage 1 (n1 nearest of the family and n1 of the others), stage 2 re-rank, then the balance rule."""
    if not index.examples:
        return Retrieved((), "signals_only", "short", {})
    d = index.distances(target)
    dropped: Counter[str] = Counter()
    chosen = _stage1(index, target, fold, settings, d, dropped)
    vectors = [index.memory.vector(index.examples[i]) for i in chosen]
    embedded = target.vector is not None and any(v is not None for v in vectors)
    ranked = _stage2(index, target, settings, d, chosen, vectors)
    picked, short = balance(ranked, target.family, settings.k)
    return Retrieved(
        tuple(picked),
        "signals+embeddings" if embedded else "signals_only",
        "short" if short else "ok",
        dict(dropped),
        tuple(ranked),
    )


def _stage1(
    index: Index, target: Target, fold: Boundary, settings: Settings, d: np.ndarray, dropped: Counter[str]
) -> list[int]:
    """The n1 nearest eligible examples of the family and the n1 of the others, by distance then tie-break;
    ``dropped`` counts what the boundary removed on the way."""
    cosines = index.cosines(target.vector)
    # stage 1 orders by the signal distance; among equal distances the nearer code goes first (when there
    # are vectors), then the seeded tie-break
    keys = (index.ties(settings.seed), d) if cosines is None else (index.ties(settings.seed), -cosines, d)
    order = np.lexsort(keys)
    same = index.family[order] == target.family
    chosen = [*_walk(index, order[same], target, fold, settings.n1, dropped)]
    chosen += [*_walk(index, order[~same], target, fold, settings.n1, dropped)]
    chosen.sort(key=lambda i: (d[i], int(index.ties(settings.seed)[i])))
    return chosen


def _stage2(
    index: Index,
    target: Target,
    settings: Settings,
    d: np.ndarray,
    chosen: Sequence[int],
    vectors: Sequence[np.ndarray | None],
) -> list[Neighbour]:
    """The chosen examples re-ranked on ``r = lam * (1 - D) + (1 - lam) * cos``, best first."""
    ranked = []
    for i, vector in zip(chosen, vectors, strict=True):
        cos = cosine(vector, target.vector)
        similarity = cos if cos is not None else 1.0 - d[i]  # no vector: keeps its stage-1 place
        score = settings.lam * (1.0 - d[i]) + (1.0 - settings.lam) * similarity
        ranked.append(Neighbour(index.examples[i], float(d[i]), cos, float(score)))
    ranked.sort(key=lambda n: -n.score)  # stable: equal scores keep the stage-1 order
    return ranked


def balance(ranked: Sequence[Neighbour], family: str, k: int) -> tuple[list[Neighbour], bool]:
    """The balance rule: at most k/2 per label and at least 2 of each when the pool has them; at most 2 per
    repository group; at least k-2 of the family when the pool has them, so at most 2 contrast examples
    (never padded). Returns the pick and whether a minimum could not be met (``balance: short``)."""
    has_family = any(n.example.family == family for n in ranked)
    labels: Counter[int] = Counter()
    groups: Counter[str] = Counter()
    contrast = 0
    picked: list[Neighbour] = []
    for n in ranked:
        if len(picked) >= k:
            break
        e = n.example
        is_contrast = e.family != family
        if labels[e.y] >= k // 2 or groups[e.group] >= 2 or (is_contrast and has_family and contrast >= 2):
            continue
        picked.append(n)
        labels[e.y] += 1
        groups[e.group] += 1
        contrast += is_contrast
    return picked, _short(picked, ranked, labels, family, k)


def _short(
    picked: Sequence[Neighbour], ranked: Sequence[Neighbour], labels: Counter[int], family: str, k: int
) -> bool:
    """Whether the pick misses a minimum of the balance rule: k in all, 2 of a label, k-2 of the family."""
    return (
        len(picked) < k
        or _label_short(ranked, labels)
        or sum(1 for n in picked if n.example.family == family) < k - 2
    )


def _label_short(ranked: Sequence[Neighbour], labels: Counter[int]) -> bool:
    """Whether a label has fewer than 2 in the pick while the pool has them, or the pool has fewer than 2."""
    pool_labels = Counter(n.example.y for n in ranked)
    return any(labels[y] < min(2, pool_labels[y]) or pool_labels[y] < 2 for y in (0, 1))

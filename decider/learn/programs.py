"""Programs under evaluation, as scorers over labelled units: the memory-vote program at $0 and a compiled
language-model program through a metered client (cached responses replay at $0).

Both run the decider's own path (``decide.decide_all``) with an evaluation boundary: only examples of the
groups the fold allows are retrieved, and never the unit's own group.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ouroboros_gates.decider.analyse import Analysed
from ouroboros_gates.decider.decide import Decided, Engine, decide_all
from ouroboros_gates.decider.embed import Embedder
from ouroboros_gates.decider.features import FEATURES, validate_record
from ouroboros_gates.decider.learn.evaluate import Score
from ouroboros_gates.decider.learn.folds import Fold
from ouroboros_gates.decider.learn.labels import LabelledUnit
from ouroboros_gates.decider.memory import Memory, MemoryExample, MemoryRefused, example_from_record
from ouroboros_gates.decider.program import Program
from ouroboros_gates.decider.retrieve import Boundary, Column, Index, columns_from_specs
from ouroboros_gates.llm import Chat

__all__ = ["ProgramScorer", "build_memory", "decide_units", "default_columns"]


def _validator(program: Program) -> Callable[[Any], None] | None:
    """A record reaching a prompt is validated first; the memory vote renders none."""
    return validate_record if program.kind == "llm-program" else None


def default_columns() -> tuple[Column, ...]:
    """The static profile's retrieval columns with priors off."""
    return columns_from_specs(FEATURES, profile="static", priors=False)


def build_memory(
    units: Sequence[LabelledUnit],
    analysed: Mapping[str, Analysed | None],
    label_set_digest: str,
) -> tuple[Memory, dict[str, int]]:
    """Examples of every unit with a record; counts of what was kept and what had no record, per source."""
    examples: list[MemoryExample] = []
    counts: dict[str, int] = {}
    for u in units:
        item = analysed.get(u.uid)
        if item is None:
            counts[f"{u.source}:no_record"] = counts.get(f"{u.source}:no_record", 0) + 1
            continue
        try:
            examples.append(_example(u, item, label_set_digest))
        except MemoryRefused:
            counts[f"{u.source}:empty_excerpt"] = counts.get(f"{u.source}:empty_excerpt", 0) + 1
            continue
        counts[f"{u.source}:examples"] = counts.get(f"{u.source}:examples", 0) + 1
    return Memory(examples), dict(sorted(counts.items()))


def _example(u: LabelledUnit, item: Analysed, label_set_digest: str) -> MemoryExample:
    """A unit's record as a memory example of this label set (``MemoryRefused``: an empty excerpt)."""
    example = example_from_record(
        item.record,
        y=u.y,
        code=item.code,
        start_line=item.start_line,
        source=u.source,
        group=u.group,
        focus=item.changed_lines or [s.line for s in item.signals],
        frameworks=u.frameworks,
        roles=item.roles,
    )
    return MemoryExample(
        example=example.example,
        excerpt=example.excerpt,
        source=example.source,
        profile=example.profile,
        unit=example.unit,
        frameworks=example.frameworks,
        roles=example.roles,
        label_set_digest=label_set_digest,
    )


@dataclass
class ProgramScorer:
    """``scorer(unit, fold) -> Score`` running one program with memory restricted to what the fold allows."""

    program: Program
    memory: Memory
    analysed: Mapping[str, Analysed | None]
    client: Chat | None = None
    columns: Sequence[Column] = field(default_factory=default_columns)
    allowed: Callable[[str], bool] | None = None  # besides the fold: e.g. only C_boot while compiling
    spent: Callable[[], tuple[float, int]] = lambda: (0.0, 0)
    embedder: Embedder | None = None  # stage 2 re-ranks by code similarity when set (a local one costs $0)
    _index: Index | None = None
    _restricted: dict[frozenset[str], Memory] = field(default_factory=dict)

    def _memory(self) -> Memory:
        """The memory the program may retrieve from (embedded first when an embedder is set)."""
        if self.embedder is not None:
            self.memory.embed(self.embedder)
        if self.allowed is None:
            return self.memory
        key = self._allowed_ids(self.allowed)
        if key not in self._restricted:
            self._restricted[key] = self._restricted_to(key)
        return self._restricted[key]

    def _allowed_ids(self, allowed: Callable[[str], bool]) -> frozenset[str]:
        """The ids of the memory's examples whose group is allowed."""
        return frozenset(e.id for e in self.memory.examples if allowed(e.group))

    def _restricted_to(self, ids: frozenset[str]) -> Memory:
        """The memory's examples with these ids, sharing its vectors."""
        restricted = Memory(e for e in self.memory.examples if e.id in ids)
        restricted.vectors, restricted.embedding_model = self.memory.vectors, self.memory.embedding_model
        return restricted

    def __call__(self, unit: LabelledUnit, fold: Fold) -> Score:
        item = self.analysed.get(unit.uid)
        if item is None:
            return Score(0.0, reach_miss=True)
        memory = self._memory()
        engine = Engine(
            program=self.program,
            memory=memory,
            columns=self.columns,
            client=self.client,
            boundary=Boundary(mode="evaluation", evaluation_groups=fold.eval_groups),
            repo_group=unit.group,
            validate=_validator(self.program),
            embedder=self.embedder,
        )
        engine._index = self._index_of(memory)
        decided = decide_all([item], engine).decided[0]
        if decided.raw_score is None:
            reason = decided.fallback or "no score"
            raise RuntimeError(f"{unit.source_ref}: the program gave no score ({reason})")
        d = decided.decision
        return Score(
            decided.raw_score,
            unsure=d.verdict == "unsure",
            usd=d.cost_usd,
            cached=d.cached or self.program.kind == "memory-vote",
        )

    def _index_of(self, memory: Memory) -> Index:
        """The retrieval index of this memory, rebuilt only when the memory changes."""
        if self._index is None or self._index.memory is not memory:
            self._index = Index(memory, self.columns)
        return self._index

    def describe(self) -> dict[str, Any]:
        """The program's id and kind, and the memory's digest."""
        return {
            "kind": self.program.kind,
            "id": self.program.program_id,
            "memory_snapshot_digest": self.memory.digest,
            "embedding": self.embedder.model if self.embedder is not None else None,
        }


def decide_units(
    program: Program,
    units: Sequence[LabelledUnit],
    analysed: Mapping[str, Analysed | None],
    memory: Memory,
    *,
    client: Chat | None = None,
    evaluation_groups: frozenset[str] = frozenset(),
    columns: Sequence[Column] | None = None,
) -> dict[str, Decided]:
    """Run a program on every unit with a record, a repository at a time (its own group never retrieved).

    ``memory`` is what may be retrieved at all; ``evaluation_groups`` are withheld from retrieval as well.
    """
    cols = tuple(columns) if columns is not None else default_columns()
    index = Index(memory, cols)
    by_group = _recorded_by_group(units, analysed)
    out: dict[str, Decided] = {}
    for group in sorted(by_group):
        batch = by_group[group]
        engine = Engine(
            program=program,
            memory=memory,
            columns=cols,
            client=client,
            boundary=Boundary(mode="evaluation", evaluation_groups=evaluation_groups),
            repo_group=group,
            validate=_validator(program),
        )
        engine._index = index
        run = decide_all(_records(batch, analysed), engine)
        out |= {u.uid: d for u, d in zip(batch, run.decided, strict=True)}
    return out


def _recorded_by_group(
    units: Sequence[LabelledUnit], analysed: Mapping[str, Analysed | None]
) -> dict[str, list[LabelledUnit]]:
    """The units with a record, by repository group."""
    by_group: dict[str, list[LabelledUnit]] = {}
    for u in units:
        if analysed.get(u.uid) is not None:
            by_group.setdefault(u.group, []).append(u)
    return by_group


def _records(batch: Sequence[LabelledUnit], analysed: Mapping[str, Analysed | None]) -> list[Analysed]:
    """The records of a batch's units, in order."""
    items = [analysed[u.uid] for u in batch]
    return [i for i in items if i is not None]

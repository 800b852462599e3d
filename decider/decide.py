"""Decide: Retrieve -> Classify(k) (or the memory vote) -> calibrated p -> BLOCK / ADVISORY / DROP.

Operating points come from the program (docs/decider.md, "Decisions and operating points"). ``unsure`` never
BLOCKs; a majority ``parse_failed`` is never dropped; a candidate not answered by the deadline is
``undecided: deadline`` (ADVISORY, unscored). When the engine cannot be used (no program, a budget spent, a
family without an operating point, a program built for other features) the report says so in one line and the
rule output stands. Each candidate's judgement, from its answer to its decision, is ``decider.judgement``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ouroboros_gates.decider.classify import Classified, classify_all, memory_vote
from ouroboros_gates.decider.embed import Embedder
from ouroboros_gates.decider.excerpt import make_excerpt
from ouroboros_gates.decider.judgement import (
    NO_PROGRAM_ID,
    Analysed,
    Decided,
    fallback,
    fallback_line,
    fingerprint,
    judge,
    operating_point,
    platt,
)
from ouroboros_gates.decider.memory import Memory
from ouroboros_gates.decider.program import CandidateView, Program, Shown, render_signals
from ouroboros_gates.decider.retrieve import (
    Boundary,
    Column,
    Index,
    Retrieved,
    Settings,
    Target,
    eligible,
    retrieve,
)
from ouroboros_gates.llm import Chat, LlmError
from ouroboros_gates.schemas import Action, FeatureRecord, Undecided

__all__ = [
    "Analysed",
    "Decided",
    "Engine",
    "Run",
    "decide_all",
    "dismiss",
    "fallback_line",
    "fingerprint",
    "monotonic_deadline",
    "operating_point",
    "platt",
]


@dataclass
class Engine:
    """What deciding needs: a program (or None), memory, retrieval columns, and optionally a chat client
    (metered) and an embedder. ``boundary``/``repo_group`` keep the user's own repository out of retrieval."""

    program: Program | None
    memory: Memory
    columns: Sequence[Column]
    client: Chat | None = None
    model: str | None = None
    embedder: Embedder | None = None
    boundary: Boundary = field(default_factory=Boundary)
    repo_group: str | None = None
    validate: Callable[[FeatureRecord], Any] | None = None
    reason: str | None = None  # why the engine is not used (fallback), when it is not
    spent: Callable[[], tuple[float, int]] = lambda: (0.0, 0)
    _index: Index | None = None

    def index(self) -> Index:
        """The memory's distance index (rebuilt when the memory changed)."""
        if self._index is None or self._index.version != self.memory.version:
            self._index = Index(self.memory, self.columns)
        return self._index


@dataclass(frozen=True)
class Run:
    """Every decision of one push or scan, and how the engine ran."""

    decided: tuple[Decided, ...]
    program_id: str
    variant: str | None
    fallback: str | None
    memory_digest: str
    usd: float = 0.0
    calls: int = 0
    self_excluded: bool = False


def _view(item: Analysed, engine: Engine) -> CandidateView:
    record = item.record
    if engine.validate is not None:
        engine.validate(record)  # the renderer refuses a record that did not pass validation
    lines = sorted({s.line for s in item.signals})
    focus = list(item.changed_lines) or lines
    excerpt = make_excerpt(item.code, item.start_line, item.language, focus=focus)
    return CandidateView(
        excerpt,
        render_signals(record.x, record.instruments),
        tuple(item.roles),
        item.candidate.family,
        tuple(item.changed_lines),
        tuple(lines),
    )


def _shown(retrieved: Retrieved, target: Target, engine: Engine) -> list[Shown]:
    shown = []
    for n in retrieved.neighbours:
        e = n.example
        # the pre-call assertion: every example rendered is eligible in this fold
        if not eligible(e, target, engine.boundary, engine.memory.vector(e)):
            raise AssertionError(f"example {e.id[:12]} is outside the boundary")
        signals = render_signals(e.example.x, e.example.instruments)
        shown.append(Shown(e.id, e.excerpt, signals, e.roles, e.family, e.y))
    return shown


def decide_all(
    analysed: Sequence[Analysed],
    engine: Engine,
    *,
    deadline: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Run:
    """Decide every candidate; ``deadline`` is a ``time.monotonic()`` instant; ``progress`` is told (done,
    total) as candidates are decided."""
    program = engine.program
    views = [_view(item, engine) for item in analysed]
    if program is None or engine.reason:
        return _without_program(analysed, engine, views)
    targets = _targets(analysed, engine, _vectors(engine, views))
    settings = Settings(
        n1=int(program.retrieval["n1"]), k=int(program.retrieval["k"]), lam=program.retrieval["lam"]
    )
    found = [retrieve(engine.index(), target, engine.boundary, settings) for target in targets]
    got = _answers(program, analysed, engine, views, found, targets, deadline=deadline, progress=progress)
    decided = _judged(analysed, program, views, got, found, progress)
    return _run(decided, engine, program, found)


def _judged(
    analysed: Sequence[Analysed],
    program: Program,
    views: Sequence[CandidateView],
    got: Sequence[Classified | None],
    found: Sequence[Retrieved],
    progress: Callable[[int, int], None] | None,
) -> tuple[Decided, ...]:
    """Each candidate's decision from its answer; ``progress`` is told when all are decided."""
    decided = tuple(
        judge(a, program, v, g, r) for a, v, g, r in zip(analysed, views, got, found, strict=True)
    )
    if progress is not None:
        progress(len(decided), len(decided))
    return decided


def _answers(
    program: Program,
    analysed: Sequence[Analysed],
    engine: Engine,
    views: Sequence[CandidateView],
    found: Sequence[Retrieved],
    targets: Sequence[Target],
    *,
    deadline: float | None,
    progress: Callable[[int, int], None] | None,
) -> Sequence[Classified | None]:
    """Each candidate's answer: its neighbours' vote, or the chat model's over the examples shown to it."""
    if program.kind == "memory-vote":
        return _voted(analysed, views, found, progress)
    assert engine.client is not None
    shown = [_shown(r, t, engine) for r, t in zip(found, targets, strict=True)]
    return classify_all(program, list(zip(views, shown, strict=True)), engine.client, deadline=deadline)


def _without_program(analysed: Sequence[Analysed], engine: Engine, views: Sequence[CandidateView]) -> Run:
    """No program, or none that can run: every candidate stands as today's rule output, with the reason."""
    program = engine.program
    reason = engine.reason or "no adopted program"
    why = Undecided.NO_PROGRAM if program is None else Undecided.MODEL_FAILED
    decided = tuple(fallback(a, program, v, reason, why) for a, v in zip(analysed, views, strict=True))
    return Run(
        decided,
        NO_PROGRAM_ID if program is None else program.program_id,
        None,
        reason,
        engine.memory.digest,
    )


def _vectors(engine: Engine, views: Sequence[CandidateView]) -> list[list[float]] | None:
    """The excerpts' embeddings; None without an embedder, or when it fails."""
    if engine.embedder is None or not views:
        return None
    try:
        return engine.embedder.embed([v.excerpt.text for v in views])
    except LlmError:  # a provider failure or budget: retrieval runs signals_only and says so
        return None


def _targets(analysed: Sequence[Analysed], engine: Engine, vectors: list[list[float]] | None) -> list[Target]:
    """What retrieval looks for, a candidate at a time: its record, family, group and unit vector."""
    targets = []
    for i, item in enumerate(analysed):
        vector = None if vectors is None else _unit(vectors[i])
        targets.append(
            Target(item.record.x, item.record.instruments, item.candidate.family, engine.repo_group, vector)
        )
    return targets


def _unit(vector: Sequence[float]) -> np.ndarray:
    raw = np.asarray(vector, dtype=np.float32)
    return raw / (float(np.linalg.norm(raw)) or 1.0)


def _voted(
    analysed: Sequence[Analysed],
    views: Sequence[CandidateView],
    found: Sequence[Retrieved],
    progress: Callable[[int, int], None] | None,
) -> list[Classified | None]:
    """The memory vote of each candidate's neighbours (no model asked)."""
    got: list[Classified | None] = []
    for i, (a, v, r) in enumerate(zip(analysed, views, found, strict=True)):
        got.append(memory_vote(r, v, sorted({s.rule for s in a.signals})))
        if progress is not None:
            progress(i + 1, len(views))
    return got


def _run(decided: tuple[Decided, ...], engine: Engine, program: Program, found: Sequence[Retrieved]) -> Run:
    """The run's record: what was decided, what it cost, and every fallback taken."""
    usd, calls = engine.spent()
    self_excluded = any(r.dropped.get("self_excluded") for r in found)
    return Run(
        decided,
        program.program_id,
        program.kind,
        "; ".join(_fallbacks(decided)) or None,
        engine.memory.digest,
        usd,
        calls,
        self_excluded,
    )


def _fallbacks(decided: Sequence[Decided]) -> list[str]:
    """Every fallback the run took, and an instrument failure when too many answers did not parse."""
    fallbacks = sorted({d.fallback for d in decided if d.fallback})
    failed = sum(d.parse_failed for d in decided)
    if failed * 20 > len(decided):  # more than 5%: an instrument failure, not a result
        fallbacks.append(f"instrument failure: {failed} of {len(decided)} answers parse_failed")
    return fallbacks


def dismiss(run: Run, dismissed: set[str]) -> Run:
    """Suppress the user's dismissed findings after the engine (they move to the dropped list)."""
    return replace(run, decided=tuple(_suppressed(d, dismissed) for d in run.decided))


def _suppressed(decided: Decided, dismissed: set[str]) -> Decided:
    """A finding the user dismissed, dropped and marked so; any other decision as it is."""
    if decided.fingerprint in dismissed and decided.decision.action is not Action.DROP:
        return replace(
            decided, decision=decided.decision.model_copy(update={"action": Action.DROP}), dismissed=True
        )
    return decided


def monotonic_deadline(seconds: float | None) -> float | None:
    """A ``time.monotonic()`` instant ``seconds`` from now."""
    return None if seconds is None else time.monotonic() + seconds

"""Decide: Retrieve -> Classify(k) (or the memory vote) -> calibrated p -> BLOCK / ADVISORY / DROP.

Operating points come from the program (docs/decider.md, "Decisions and operating points"). ``unsure`` never
BLOCKs; a majority ``parse_failed`` is never dropped; a candidate not answered by the deadline is
``undecided: deadline`` (ADVISORY, unscored). When the engine cannot be used (no program, a budget spent, a
family without an operating point, a program built for other features) the report says so in one line and the
rule output stands.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

import numpy as np

from ouroboros_gates.decider.classify import Classified, classify_all, memory_vote
from ouroboros_gates.decider.embed import Embedder
from ouroboros_gates.decider.evidence import GUARDED_MARGIN, Evidence, evidence_of
from ouroboros_gates.decider.excerpt import Excerpt, make_excerpt
from ouroboros_gates.decider.instruments.taint import Flow
from ouroboros_gates.decider.memory import Memory
from ouroboros_gates.decider.program import CandidateView, OperatingPoint, Program, Shown, render_signals
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
from ouroboros_gates.schemas import Action, Candidate, Decision, FeatureRecord, Undecided

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

NO_PROGRAM_ID = "0" * 64
Verdict = Literal["vulnerable", "not_vulnerable", "unsure"]


class SignalLike(Protocol):
    """An instrument's signal (``decider.Signal``)."""

    @property
    def instrument(self) -> str: ...
    @property
    def rule(self) -> str: ...
    @property
    def line(self) -> int: ...


class Analysed(Protocol):
    """A candidate with its record, signals, roles and code (``decider.Analysed``)."""

    @property
    def candidate(self) -> Candidate: ...
    @property
    def language(self) -> str: ...
    @property
    def record(self) -> FeatureRecord: ...
    @property
    def signals(self) -> Sequence[SignalLike]: ...
    @property
    def roles(self) -> Sequence[str]: ...
    @property
    def code(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def changed_lines(self) -> Sequence[int]: ...
    @property
    def flows(self) -> Sequence[Flow]: ...
    @property
    def priors(self) -> Sequence[str]: ...


def fallback_line(reason: str) -> str:
    """The one report line saying the engine was not used, and why (docs/decider.md, "Fallback")."""
    return f"decision engine: not used ({reason}) -- findings are today's rule output"


def fingerprint(candidate: Candidate) -> str:
    """A finding's fingerprint across pins: path, function and family (what a dismissal names)."""
    return hashlib.sha256(f"{candidate.path}::{candidate.function}#{candidate.family}".encode()).hexdigest()[
        :32
    ]


def platt(score: float, ab: tuple[float, float] | None) -> float:
    """Platt's map on ``logit(clip(s, 0.01, 0.99))``; the raw score when there is no map."""
    if ab is None:
        return score
    s = min(max(score, 0.01), 0.99)
    z = ab[0] * math.log(s / (1 - s)) + ab[1]
    return 1.0 / (1.0 + math.exp(-z))


def operating_point(p: float, verdict: str, program: Program, family: str) -> tuple[Action, bool] | None:
    """(action, BLOCK offered) at the family's operating point; None when the family has none."""
    point = program.point(family)
    if point is None:
        return None
    if point.block_offered and point.block is not None and p >= point.block and verdict != "unsure":
        return Action.BLOCK, True
    return (Action.ADVISORY if p >= point.advisory else Action.DROP), point.block_offered


@dataclass(frozen=True)
class Decided:
    """One candidate's decision with what the reports show beside it."""

    analysed: Any
    decision: Decision
    excerpt: Excerpt
    raw_score: float | None = None
    parse_failed: bool = False
    balance: str | None = None
    neighbours: dict[str, dict[str, int]] = field(default_factory=dict)
    votes: dict[str, int] = field(default_factory=dict)
    calibrated: bool = False
    fallback: str | None = None
    dismissed: bool = False
    evidence: Evidence = field(default_factory=lambda: Evidence("none"))
    vote_score: float | None = None  # the program's own score, before the evidence moved it

    @property
    def operating_point(self) -> str:
        """block | advisory | drop."""
        return self.decision.action.value.lower()

    @property
    def fingerprint(self) -> str:
        """The finding's fingerprint."""
        return fingerprint(self.decision.candidate)


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


def _named(text: str, item: Analysed) -> tuple[str, ...]:
    """Signals the rationale names that the record holds (others are dropped)."""
    words = set(re.findall(r"[A-Za-z0-9_.+#-]+", text))
    names = {n for n, v in item.record.x.items() if v is not None and n in words}
    names |= {s.rule for s in item.signals if s.rule in words}
    return tuple(sorted(names))


def _base(item: Analysed, engine: Engine, **fields: Any) -> Decision:
    program = engine.program
    return Decision(
        candidate=item.candidate,
        program_id=program.program_id if program else NO_PROGRAM_ID,
        variant=program.kind if program else None,
        priors=tuple(item.priors),
        **fields,
    )


def _fallback(item: Analysed, engine: Engine, view: CandidateView, reason: str, why: Undecided) -> Decided:
    """Today's rule output: the candidate stands as a finding (ADVISORY), unscored, with the reason."""
    decision = _base(
        item, engine, action=Action.ADVISORY, p=None, undecided=why, rationale=fallback_line(reason)
    )
    return Decided(item, decision, view.excerpt, fallback=reason)


_FAILURES = {
    "budget_exhausted": ("budget exhausted", Undecided.BUDGET_EXHAUSTED),
    "account": ("no model key", Undecided.MODEL_FAILED),
    "model_failed": ("model unavailable", Undecided.MODEL_FAILED),
}


def _judge(
    item: Analysed, engine: Engine, view: CandidateView, got: Classified | None, retrieved: Retrieved
) -> Decided:
    if got is None:
        return _past_deadline(item, engine, view, retrieved)
    if got.failure is not None:
        reason, why = _FAILURES[got.failure.reason]
        return _fallback(item, engine, view, reason, why)
    return _scored(item, engine, view, got, retrieved)


def _past_deadline(item: Analysed, engine: Engine, view: CandidateView, retrieved: Retrieved) -> Decided:
    """A candidate the deadline left unasked: ADVISORY and unsure."""
    decision = _base(
        item,
        engine,
        action=Action.ADVISORY,
        p=None,
        undecided=Undecided.DEADLINE,
        verdict="unsure",
        rationale="undecided: deadline",
        retrieval=retrieved.retrieval,
    )
    return Decided(item, decision, view.excerpt, balance=retrieved.balance)


def _scored(
    item: Analysed, engine: Engine, view: CandidateView, got: Classified, retrieved: Retrieved
) -> Decided:
    """A model's answer: its score adjusted by the evidence, calibrated, placed at the family's operating
    point and bounded by what the evidence allows."""
    assert engine.program is not None
    program, family = engine.program, item.candidate.family
    evidence = evidence_of(item.flows, [s.line for s in item.signals])
    score = evidence.adjust(got.score)
    ab = program.calibration.get(family) or program.calibration.get("*")
    p = platt(score, ab)
    point = operating_point(p, got.verdict, program, family)
    action, p, verdict, extra = _placed(evidence, got, p, point, program.point(family))
    decision = _base(
        item,
        engine,
        action=action,
        p=round(p, 6),
        rationale=_rationale(evidence, got),
        model=got.model,
        cost_usd=round(got.usd, 8),
        cached=got.cached and got.variant == "llm-program",
        verdict=verdict,
        cited_lines=got.cited_lines,
        signals=_named(got.rationale, item),
        offered=point is not None and point[1],
        retrieval=retrieved.retrieval,
        evidence=evidence.kind if evidence.kind != "none" else None,
        **extra,
    )
    return Decided(
        item,
        decision,
        view.excerpt,
        raw_score=score,
        parse_failed=got.parse_failed,
        balance=retrieved.balance,
        neighbours=got.neighbours or retrieved.counts(),
        votes=got.votes,
        calibrated=ab is not None,
        fallback=None if point else "family insufficient data",
        evidence=evidence,
        vote_score=got.score,
    )


def _rationale(evidence: Evidence, got: Classified) -> str:
    """What the evidence says, then the model's rationale."""
    return " ".join(part for part in (evidence.said(), got.rationale) if part)


def _placed(
    evidence: Evidence,
    got: Classified,
    p: float,
    point: tuple[Action, bool] | None,
    operating: OperatingPoint | None,
) -> tuple[Action, float, Verdict, dict[str, Any]]:
    """The action, probability and verdict the operating point and the evidence allow, with the reason a
    candidate stays undecided (a family without an operating point, an answer that did not parse)."""
    extra: dict[str, Any] = {}
    if point is None:
        action, extra["undecided"] = Action.ADVISORY, Undecided.INSUFFICIENT_DATA
    else:
        action = point[0]
    action, p, verdict = _bounded(evidence, action, p, got.verdict, operating)
    if got.parse_failed:
        action, extra["undecided"] = (
            (Action.ADVISORY if action is Action.DROP else action),
            Undecided.PARSE_FAILED,
        )
    return action, p, verdict, extra


def _bounded(
    evidence: Evidence,
    action: Action,
    p: float,
    verdict: str,
    point: OperatingPoint | None,
) -> tuple[Action, float, Verdict]:
    """What the evidence allows: a live flow is ADVISORY at least (p raised to the threshold), a guarded
    candidate is dropped below it; a reported candidate never carries ``not_vulnerable``."""
    threshold = point.advisory if point is not None else 0.5
    if evidence.kind == "live":
        return (Action.ADVISORY if action is Action.DROP else action), max(p, threshold), "vulnerable"
    if evidence.kind == "guarded":
        return Action.DROP, min(p, max(0.0, threshold - GUARDED_MARGIN)), "not_vulnerable"
    if action is not Action.DROP and verdict == "not_vulnerable":
        return (
            action,
            p,
            "unsure",
        )  # above the threshold, against the neighbours' majority: not a clean verdict
    return action, p, verdict  # type: ignore[return-value]


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
    if program.kind == "memory-vote":
        got = _voted(analysed, views, found, progress)
    else:
        assert engine.client is not None
        shown = [_shown(r, t, engine) for r, t in zip(found, targets, strict=True)]
        got = classify_all(program, list(zip(views, shown, strict=True)), engine.client, deadline=deadline)
    decided = tuple(
        _judge(a, engine, v, g, r) for a, v, g, r in zip(analysed, views, got, found, strict=True)
    )
    if progress is not None:
        progress(len(decided), len(decided))
    return _run(decided, engine, program, found)


def _without_program(analysed: Sequence[Analysed], engine: Engine, views: Sequence[CandidateView]) -> Run:
    """No program, or none that can run: every candidate stands as today's rule output, with the reason."""
    program = engine.program
    reason = engine.reason or "no adopted program"
    why = Undecided.NO_PROGRAM if program is None else Undecided.MODEL_FAILED
    decided = tuple(_fallback(a, engine, v, reason, why) for a, v in zip(analysed, views, strict=True))
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
    fallbacks = sorted({d.fallback for d in decided if d.fallback})
    failed = sum(d.parse_failed for d in decided)
    if failed * 20 > len(decided):  # more than 5%: an instrument failure, not a result
        fallbacks.append(f"instrument failure: {failed} of {len(decided)} answers parse_failed")
    self_excluded = any(r.dropped.get("self_excluded") for r in found)
    return Run(
        decided,
        program.program_id,
        program.kind,
        "; ".join(fallbacks) or None,
        engine.memory.digest,
        usd,
        calls,
        self_excluded,
    )


def dismiss(run: Run, dismissed: set[str]) -> Run:
    """Suppress the user's dismissed findings after the engine (they move to the dropped list)."""
    out = []
    for d in run.decided:
        if d.fingerprint in dismissed and d.decision.action is not Action.DROP:
            out.append(
                replace(d, decision=d.decision.model_copy(update={"action": Action.DROP}), dismissed=True)
            )
        else:
            out.append(d)
    return replace(run, decided=tuple(out))


def monotonic_deadline(seconds: float | None) -> float | None:
    """A ``time.monotonic()`` instant ``seconds`` from now."""
    return None if seconds is None else time.monotonic() + seconds

"""One candidate's judgement: the model's answer (or the memory vote) adjusted by the evidence, calibrated,
placed at the family's operating point and bounded by what the evidence allows, or the rule output standing
with the reason the engine was not used.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ouroboros_gates.decider.classify import Classified
from ouroboros_gates.decider.evidence import GUARDED_MARGIN, Evidence, evidence_of
from ouroboros_gates.decider.excerpt import Excerpt
from ouroboros_gates.decider.instruments.taint import Flow
from ouroboros_gates.decider.program import CandidateView, OperatingPoint, Program
from ouroboros_gates.decider.retrieve import Retrieved
from ouroboros_gates.schemas import Action, Candidate, Decision, FeatureRecord, Undecided

__all__ = [
    "NO_PROGRAM_ID",
    "Analysed",
    "Decided",
    "fallback",
    "fallback_line",
    "fingerprint",
    "judge",
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
    if point.blocks(p) and verdict != "unsure":
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


def _named(text: str, item: Analysed) -> tuple[str, ...]:
    """Signals the rationale names that the record holds (others are dropped)."""
    words = set(re.findall(r"[A-Za-z0-9_.+#-]+", text))
    names = _features_named(item.record, words)
    names |= {s.rule for s in item.signals if s.rule in words}
    return tuple(sorted(names))


def _features_named(record: FeatureRecord, words: set[str]) -> set[str]:
    """The record's features with a value whose names are among the words."""
    return {n for n, v in record.x.items() if v is not None and n in words}


def _base(item: Analysed, program: Program | None, **fields: Any) -> Decision:
    return Decision(
        candidate=item.candidate,
        program_id=program.program_id if program else NO_PROGRAM_ID,
        variant=program.kind if program else None,
        priors=tuple(item.priors),
        **fields,
    )


def fallback(
    item: Analysed, program: Program | None, view: CandidateView, reason: str, why: Undecided
) -> Decided:
    """Today's rule output: the candidate stands as a finding (ADVISORY), unscored, with the reason."""
    decision = _base(
        item, program, action=Action.ADVISORY, p=None, undecided=why, rationale=fallback_line(reason)
    )
    return Decided(item, decision, view.excerpt, fallback=reason)


_FAILURES = {
    "budget_exhausted": ("budget exhausted", Undecided.BUDGET_EXHAUSTED),
    "account": ("no model key", Undecided.MODEL_FAILED),
    "model_failed": ("model unavailable", Undecided.MODEL_FAILED),
}


def judge(
    item: Analysed, program: Program, view: CandidateView, got: Classified | None, retrieved: Retrieved
) -> Decided:
    """The candidate's decision from its answer: none by the deadline, a failed call, or a score."""
    if got is None:
        return _past_deadline(item, program, view, retrieved)
    if got.failure is not None:
        reason, why = _FAILURES[got.failure.reason]
        return fallback(item, program, view, reason, why)
    return _scored(item, program, view, got, retrieved)


def _past_deadline(item: Analysed, program: Program, view: CandidateView, retrieved: Retrieved) -> Decided:
    """A candidate the deadline left unasked: ADVISORY and unsure."""
    decision = _base(
        item,
        program,
        action=Action.ADVISORY,
        p=None,
        undecided=Undecided.DEADLINE,
        verdict="unsure",
        rationale="undecided: deadline",
        retrieval=retrieved.retrieval,
    )
    return Decided(item, decision, view.excerpt, balance=retrieved.balance)


@dataclass(frozen=True)
class _Scoring:
    """An answer's score adjusted by the evidence and calibrated, with the family's operating point."""

    evidence: Evidence
    score: float
    ab: tuple[float, float] | None
    p: float
    point: tuple[Action, bool] | None

    @classmethod
    def of(cls, item: Analysed, program: Program, got: Classified) -> _Scoring:
        """Score one answer for the candidate's family."""
        family = item.candidate.family
        evidence = evidence_of(item.flows, [s.line for s in item.signals])
        score = evidence.adjust(got.score)
        ab = program.platt_map(family)
        p = platt(score, ab)
        return cls(evidence, score, ab, p, operating_point(p, got.verdict, program, family))

    @property
    def offered(self) -> bool:
        """Whether BLOCK is offered at the family's operating point."""
        return self.point is not None and self.point[1]

    @property
    def evidence_kind(self) -> str | None:
        """The evidence's kind as the decision records it (None when there is none)."""
        return self.evidence.kind if self.evidence.kind != "none" else None


def _scored(
    item: Analysed, program: Program, view: CandidateView, got: Classified, retrieved: Retrieved
) -> Decided:
    """A model's answer: its score adjusted by the evidence, calibrated, placed at the family's operating
    point and bounded by what the evidence allows."""
    scoring = _Scoring.of(item, program, got)
    return Decided(
        item,
        _scored_decision(item, program, got, retrieved, scoring),
        view.excerpt,
        raw_score=scoring.score,
        parse_failed=got.parse_failed,
        balance=retrieved.balance,
        neighbours=got.neighbours or retrieved.counts(),
        votes=got.votes,
        calibrated=scoring.ab is not None,
        fallback=None if scoring.point else "family insufficient data",
        evidence=scoring.evidence,
        vote_score=got.score,
    )


def _scored_decision(
    item: Analysed, program: Program, got: Classified, retrieved: Retrieved, scoring: _Scoring
) -> Decision:
    """The decision a scored answer makes, with what the model said and what it cost."""
    operating = program.point(item.candidate.family)
    action, p, verdict, extra = _placed(scoring.evidence, got, scoring.p, scoring.point, operating)
    return _base(
        item,
        program,
        action=action,
        p=round(p, 6),
        rationale=_rationale(scoring.evidence, got),
        model=got.model,
        cost_usd=round(got.usd, 8),
        cached=got.cached and got.variant == "llm-program",
        verdict=verdict,
        cited_lines=got.cited_lines,
        signals=_named(got.rationale, item),
        offered=scoring.offered,
        retrieval=retrieved.retrieval,
        evidence=scoring.evidence_kind,
        **extra,
    )


def _rationale(evidence: Evidence, got: Classified) -> str:
    """What the evidence says, then the model's rationale."""
    return " ".join(part for part in (evidence.said(), got.rationale) if part)


def _at_least_advisory(action: Action) -> Action:
    """The action, raised from DROP to ADVISORY."""
    return Action.ADVISORY if action is Action.DROP else action


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
        action, extra["undecided"] = _at_least_advisory(action), Undecided.PARSE_FAILED
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
    bound = _BOUNDS.get(evidence.kind, _as_answered)
    return bound(action, p, verdict, threshold)


def _live(action: Action, p: float, verdict: str, threshold: float) -> tuple[Action, float, Verdict]:
    """A live flow: ADVISORY at least, p raised to the threshold, vulnerable."""
    return _at_least_advisory(action), max(p, threshold), "vulnerable"


def _guarded(action: Action, p: float, verdict: str, threshold: float) -> tuple[Action, float, Verdict]:
    """Every sink guarded: dropped, p held below the threshold, not vulnerable."""
    return Action.DROP, min(p, max(0.0, threshold - GUARDED_MARGIN)), "not_vulnerable"


def _as_answered(action: Action, p: float, verdict: str, threshold: float) -> tuple[Action, float, Verdict]:
    """No evidence either way: the answer stands, except a reported ``not_vulnerable`` becomes unsure."""
    if action is not Action.DROP and verdict == "not_vulnerable":
        return (
            action,
            p,
            "unsure",
        )  # above the threshold, against the neighbours' majority: not a clean verdict
    return action, p, verdict  # type: ignore[return-value]


_BOUNDS: dict[str, Callable[[Action, float, str, float], tuple[Action, float, Verdict]]] = {
    "live": _live,
    "guarded": _guarded,
}

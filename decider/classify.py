"""Classify(k) (docs/decider.md, "Classify(k)"): sample 1 at temperature 0, samples 2..k at 0.7, at most 8
requests in flight; the raw score is the mean vote and the verdict the majority (ties: ``unsure``). A reply
that does not parse is asked again once at temperature 0, then becomes ``unsure, parse_failed``.

``memory_vote`` is the variant without a chat model: the retrieved neighbours vote, at $0.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Literal

from ouroboros_gates.decider.program import (
    ANSWER_SCHEMA,
    PARSE_FAILED,
    Answer,
    AnswerError,
    CandidateView,
    Program,
    Shown,
    parse_answer,
    render_messages,
)
from ouroboros_gates.decider.retrieve import Neighbour, Retrieved
from ouroboros_gates.llm import (
    MAX_IN_FLIGHT,
    AccountError,
    BudgetExhausted,
    Chat,
    ChatReply,
    ChatRequest,
    LlmError,
    ReplyParseError,
)

__all__ = ["Classified", "SampleFailure", "classify_all", "majority", "memory_vote", "vote_score"]

SAMPLE_TEMPERATURE = 0.7
VOTE_SCALE = 0.1
Variant = Literal["llm-program", "memory-vote"]


@dataclass(frozen=True)
class SampleFailure:
    """Why a sample has no answer: ``budget_exhausted``, ``account`` or ``model_failed``, and the message."""

    reason: Literal["budget_exhausted", "account", "model_failed"]
    message: str


@dataclass(frozen=True)
class Classified:
    """One candidate's classification: raw score, majority verdict and its rationale, and what it cost."""

    score: float
    verdict: Literal["vulnerable", "not_vulnerable", "unsure"]
    rationale: str
    cited_lines: tuple[int, ...]
    variant: Variant
    answers: tuple[Answer, ...] = ()
    usd: float = 0.0
    calls: int = 0
    cached: bool = False
    model: str | None = None
    failure: SampleFailure | None = None
    neighbours: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def parse_failed(self) -> bool:
        """The majority answer is a parse failure."""
        failed = sum(a.parse_failed for a in self.answers)
        return bool(self.answers) and failed * 2 > len(self.answers)

    @property
    def votes(self) -> dict[str, int]:
        """Answers per verdict."""
        return dict(sorted(Counter(a.verdict for a in self.answers).items()))


def vote_score(answers: Sequence[Answer]) -> float:
    """``s = mean_j p_j``."""
    return sum(a.p for a in answers) / len(answers) if answers else 0.5


def majority(answers: Sequence[Answer]) -> Literal["vulnerable", "not_vulnerable", "unsure"]:
    """The most frequent verdict; a tie is ``unsure``."""
    ranked = Counter(a.verdict for a in answers).most_common()
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return "unsure"
    return ranked[0][0]


@dataclass
class _Sample:
    answer: Answer | None = None
    failure: SampleFailure | None = None
    usd: float = 0.0
    calls: int = 0
    cached: bool = True
    model: str | None = None

    def take(self, reply: ChatReply) -> None:
        self.usd += reply.cost_usd
        self.calls += 0 if reply.cached else 1
        self.cached = self.cached and reply.cached
        self.model = reply.model


def _ask(
    client: Chat, messages: list[dict[str, str]], view: CandidateView, temperature: float, sample: int
) -> _Sample:
    """One sample; a reply that does not parse is asked again once at temperature 0 with the reason."""
    out = _Sample()
    convo = list(messages)
    for attempt in range(2):
        request = _request(convo, temperature if attempt == 0 else 0.0, sample)
        try:
            reply = client.chat(request)
        except ReplyParseError as exc:
            problem, text = f"not JSON of the answer format: {exc}", exc.text
        except LlmError as exc:
            return _fail(out, _failure_reason(exc), exc)
        else:
            out.take(reply)
            unusable = _parse_into(out, reply, view)
            if unusable is None:
                return out
            problem, text = unusable, reply.text
        convo = _asked_again(messages, text, problem)
    out.answer = PARSE_FAILED
    return out


def _request(convo: Sequence[dict[str, str]], temperature: float, sample: int) -> ChatRequest:
    """The chat request of one attempt at a sample."""
    return ChatRequest(
        messages=tuple({"role": m["role"], "content": m["content"]} for m in convo),
        schema=ANSWER_SCHEMA,
        temperature=temperature,
        sample=sample,
    )


def _parse_into(out: _Sample, reply: ChatReply, view: CandidateView) -> str | None:
    """Parse the reply into the sample's answer; the reason it cannot be used when it does not parse."""
    try:
        out.answer = parse_answer(reply.data if isinstance(reply.data, dict) else reply.text, view.excerpt)
    except AnswerError as exc:
        return str(exc)
    return None


def _asked_again(messages: Sequence[dict[str, str]], text: str | None, problem: str) -> list[dict[str, str]]:
    """The conversation that asks again: the prompt, the unusable answer, and why it cannot be used."""
    again = f"That answer cannot be used ({problem}). Answer again in JSON."
    return [
        *messages,
        {"role": "assistant", "content": text or "(empty)"},
        {"role": "user", "content": again},
    ]


def _failure_reason(exc: LlmError) -> Literal["budget_exhausted", "account", "model_failed"]:
    """What a model call's failure is called in a sample (a reply that does not parse is not one)."""
    if isinstance(exc, BudgetExhausted):
        return "budget_exhausted"
    if isinstance(exc, AccountError):
        return "account"
    return "model_failed"


def _fail(
    out: _Sample, reason: Literal["budget_exhausted", "account", "model_failed"], exc: Exception
) -> _Sample:
    out.failure = SampleFailure(reason, str(exc))
    return out


def _combine(samples: Sequence[_Sample], variant: Variant) -> Classified:
    answers = tuple(s.answer for s in samples if s.answer is not None)
    verdict = majority(answers)
    rationale, cited_lines = _lead_said(answers, verdict)
    return Classified(
        score=vote_score(answers),
        verdict=verdict,
        rationale=rationale,
        cited_lines=cited_lines,
        variant=variant,
        answers=answers,
        **_metered(samples),
    )


def _lead_said(answers: Sequence[Answer], verdict: str) -> tuple[str, tuple[int, ...]]:
    """The rationale and cited lines of the lead answer; none without one."""
    lead = _lead(answers, verdict)
    if lead is None:
        return "", ()
    return lead.rationale, lead.cited_lines


def _metered(samples: Sequence[_Sample]) -> dict[str, Any]:
    """What the samples cost, whether all came from the cache, the model that answered and the first
    failure."""
    return {
        "usd": sum(s.usd for s in samples),
        "calls": sum(s.calls for s in samples),
        "cached": all(s.cached for s in samples),
        "model": _model(samples),
        "failure": _failure(samples),
    }


def _lead(answers: Sequence[Answer], verdict: str) -> Answer | None:
    """The first parsed answer of the majority verdict: the rationale and lines a decision shows."""
    return next((a for a in answers if a.verdict == verdict and not a.parse_failed), None)


def _model(samples: Sequence[_Sample]) -> str | None:
    return next((s.model for s in samples if s.model), None)


def _failure(samples: Sequence[_Sample]) -> SampleFailure | None:
    return next((s.failure for s in samples if s.failure is not None), None)


def classify_all(
    program: Program,
    items: Sequence[tuple[CandidateView, Sequence[Shown]]],
    client: Chat,
    *,
    deadline: float | None = None,
    max_in_flight: int = MAX_IN_FLIGHT,
) -> list[Classified | None]:
    """Classify every candidate, its k samples issued concurrently with at most ``max_in_flight`` in flight.

    ``deadline`` is a ``time.monotonic()`` instant; a candidate with a sample unanswered by then is None
    (``undecided: deadline``). Calls still running at the deadline are left to finish in the background.
    """
    pool = ThreadPoolExecutor(max_workers=max_in_flight, thread_name_prefix="classify")
    futures = [_submit(pool, client, program, view, shown) for view, shown in items]
    every = [f for group in futures for f in group]
    wait(every, timeout=_time_left(deadline))
    pool.shutdown(wait=False, cancel_futures=True)
    return [_classified(group) for group in futures]


def _time_left(deadline: float | None) -> float | None:
    """Seconds until the ``time.monotonic()`` deadline (none left once past); None without one."""
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def _classified(group: Sequence[Future[_Sample]]) -> Classified | None:
    """A candidate's classification from its samples; None when one was not back by the deadline."""
    return _combine([f.result() for f in group], "llm-program") if _answered(group) else None


def _submit(
    pool: ThreadPoolExecutor, client: Chat, program: Program, view: CandidateView, shown: Sequence[Shown]
) -> list[Future[_Sample]]:
    """A candidate's k samples, the first at temperature 0."""
    messages = render_messages(program, view, shown)
    return [
        pool.submit(_ask, client, messages, view, 0.0 if j == 0 else SAMPLE_TEMPERATURE, j)
        for j in range(program.k)
    ]


def _answered(group: Sequence[Future[_Sample]]) -> bool:
    """Whether every sample of a candidate came back (by the deadline)."""
    return all(f.done() and not f.cancelled() for f in group)


def _voters(pool: Sequence[Neighbour], family: str, k: int) -> list[Neighbour]:
    """The k nearest, the candidate's family first (at most 2 per group); other families only fill the
    places the family leaves empty."""
    groups: Counter[str] = Counter()
    voters: list[Neighbour] = []
    own, other = _by_family(pool, family)
    for n in [*own, *other]:
        if len(voters) < k and groups[n.example.group] < 2:
            voters.append(n)
            groups[n.example.group] += 1
    return voters


def _by_family(neighbours: Sequence[Neighbour], family: str) -> tuple[list[Neighbour], list[Neighbour]]:
    """The neighbours of the candidate's family and those of the others, each in order."""
    own = [n for n in neighbours if n.example.family == family]
    other = [n for n in neighbours if n.example.family != family]
    return own, other


CONTRAST_SHARE = 0.5
"""Other families' votes together weigh at most this share of the family's votes (of the prior pseudo-vote
when the family has none)."""


def _weights(voters: Sequence[Neighbour], family: str) -> list[float]:
    """``exp(-(1 - r) / 0.1)`` per voter on its re-rank score; other families scaled down so that they can
    inform a decision but never outvote the candidate's own family."""
    raw = [math.exp(-(1.0 - n.score) / VOTE_SCALE) for n in voters]
    scale = _contrast_scale(raw, voters, family)
    return [w if n.example.family == family else w * scale for w, n in zip(raw, voters, strict=True)]


def _contrast_scale(raw: Sequence[float], voters: Sequence[Neighbour], family: str) -> float:
    """The factor on other families' weights that keeps them within ``CONTRAST_SHARE`` of the family's (of
    one pseudo-vote when the family has none)."""
    own, other = _weight_by_family(raw, voters, family)
    return min(1.0, CONTRAST_SHARE * (own or 1.0) / other) if other else 1.0


def _weight_by_family(raw: Sequence[float], voters: Sequence[Neighbour], family: str) -> tuple[float, float]:
    """The weight of the voters of the candidate's family, and that of the others."""
    own = sum(w for w, n in zip(raw, voters, strict=True) if n.example.family == family)
    other = sum(w for w, n in zip(raw, voters, strict=True) if n.example.family != family)
    return own, other


def _vote_said(voters: Sequence[Neighbour], family: str) -> str:
    """How the voters voted, as the weights count them: the candidate's family, then the others (which weigh
    at most ``CONTRAST_SHARE`` of it), so the words agree with the verdict."""
    own, other = _by_family(voters, family)
    said = _own_said(own, family)
    if other:
        said += _others_said(other, bool(own))
    return said


def _own_said(own: Sequence[Neighbour], family: str) -> str:
    mine = sum(n.example.y for n in own)
    if not own:
        return f"no labelled {family} example is near"
    if len(own) == 1:
        return f"the nearest labelled {family} example is {'vulnerable' if mine else 'not vulnerable'}"
    return f"{mine} of the {len(own)} nearest labelled {family} examples are vulnerable"


def _others_said(other: Sequence[Neighbour], has_own: bool) -> str:
    kinds = ", ".join(f"{f} {c}" for f, c in sorted(Counter(n.example.family for n in other).items()))
    against = "" if has_own else " as the prior"
    return (
        f"; other families, together weighing at most {CONTRAST_SHARE:g}x as much{against}: "
        f"{sum(n.example.y for n in other)} of {len(other)} vulnerable ({kinds})"
    )


def memory_vote(
    retrieved: Retrieved, view: CandidateView, signal_names: Sequence[str] = (), k: int = 6
) -> Classified:
    """The nearest labelled examples vote (their family first, weighted by ``exp(-(1 - r) / 0.1)`` on the
    re-rank score, other families never outweighing it) and one pseudo-vote shrinks toward 0.5. No label cap
    here: the balance rule shapes prompts, not votes."""
    ns = _voters(retrieved.pool or retrieved.neighbours, view.family, k)
    s = _shrunk_vote(_weights(ns, view.family), ns)
    verdict = _verdict_of(s)
    cited = _cited(view)
    where = ", ".join(str(n) for n in cited)
    named = f" ({', '.join(signal_names)})" if signal_names else ""
    rationale = (
        f"Memory vote: {_vote_said(ns, view.family)}; retrieval {retrieved.retrieval}. The signals{named} "
        "are at "
        f"line {where}."
    )
    counts = _neighbour_counts(ns)
    return Classified(
        score=s,
        verdict=verdict,
        rationale=rationale,
        cited_lines=cited,
        variant="memory-vote",
        neighbours=counts,
    )


def _shrunk_vote(weights: Sequence[float], voters: Sequence[Neighbour]) -> float:
    """The weighted share of vulnerable voters, with one pseudo-vote of 0.5."""
    return (sum(w * n.example.y for w, n in zip(weights, voters, strict=True)) + 0.5) / (sum(weights) + 1.0)


def _verdict_of(s: float) -> Literal["vulnerable", "not_vulnerable", "unsure"]:
    """``vulnerable`` above 0.5, ``not_vulnerable`` below it, ``unsure`` at it."""
    return "vulnerable" if s > 0.5 + 1e-9 else "not_vulnerable" if s < 0.5 - 1e-9 else "unsure"


def _cited(view: CandidateView) -> tuple[int, ...]:
    """The signal lines the excerpt shows; its first line when it shows none."""
    return tuple(n for n in view.signal_lines if view.excerpt.covers(n)) or (view.excerpt.first_line,)


def _neighbour_counts(voters: Sequence[Neighbour]) -> dict[str, dict[str, int]]:
    """The voters by label and by family."""
    labels = Counter("vulnerable" if n.example.y else "not_vulnerable" for n in voters)
    families = Counter(n.example.family for n in voters)
    return {"label": dict(sorted(labels.items())), "family": dict(sorted(families.items()))}

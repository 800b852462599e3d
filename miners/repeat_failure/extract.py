"""REPEAT-FAILURE's extractor: one harness run in, its tool calls in order, what each ran and which
failed, out; the rule counts the streaks itself.

- ``called(R, C, T, D)``: call C (its ``tool_use_id``) of run R ran tool T with input digest D, at the
  call's line. D is the first 16 hex digits of the SHA-256 of the input as canonical JSON without its
  ``description`` (a label for the reader that changes nothing the call does), so two calls with
  one D ran the same thing.
- ``next(R, C1, C2)``: C2 is the call that the same agent (the main agent, or one subagent) made
  right after C1, at C2's line.
- ``failed(R, C)``: C's result is a tool error (``harness.is_tool_error``: ``is_error``, a
  failure hook, a permission or gate denial), at the first line that reports it.
- ``succ(R, N, M)``: run R has an M-th tool call, M = N + 1, at that call's line. The dialect has no
  arithmetic, so the rule counts a streak by walking these.
- ``score(R, N)``: the longest streak in R of consecutive calls of one agent that ran the same tool
  with the same input and all failed (1 for a lone failure, 0 when nothing failed), at the line of
  the call that ended it: the knee's candidates. The rule derives the same streaks from the facts
  above, so that a finding's proof names every call and every failure of its streak.

Pure: reads the run, nothing else.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ouroboros_gates.harness import is_tool_error
from ouroboros_gates.miners.corpus import CorpusItem
from ouroboros_gates.schemas import Fact, HarnessEvent, HarnessKind, Number, Span, Text

NAME = "repeat-failure"
PACKAGE = "ouroboros_gates.miners.repeat_failure"
VERDICTS = ("repeat_failure",)
SCOPE = "generic"
CORPUS = ("jsonl",)
SEVERITY = "SEVERITY_S3"
GATE = "warn"

IGNORED_INPUT = frozenset({"description"})
"""Input fields that label a call for the reader and change nothing it does."""


def digest(tool_input: dict[str, Any] | None) -> str:
    """The input's identity: 16 hex digits of the SHA-256 of its canonical JSON, labels left out."""
    kept = {key: value for key, value in (tool_input or {}).items() if key not in IGNORED_INPUT}
    canonical = json.dumps(kept, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Call:
    """One tool call: its id, which agent made it, what it ran, and where."""

    id: str
    agent: str | None
    what: tuple[str, str]
    span: Span


def longest_streak(calls: list[Call], failed: set[str]) -> tuple[int, Span | None]:
    """The longest run of one agent's consecutive identical failing calls, and where it ended."""
    best: tuple[int, Span | None] = (0, None)
    current: dict[str | None, tuple[int, Call | None]] = {}
    for call in calls:
        length, previous = current.get(call.agent, (0, None))
        length = _streak_after(length, previous, call, failed)
        current[call.agent] = (length, call)
        if length > best[0]:
            best = (length, call.span)
    return best


def _streak_after(length: int, previous: Call | None, call: Call, failed: set[str]) -> int:
    """The agent's streak once ``call`` follows ``previous`` (its streak ``length``): longer by one when
    it fails as a repeat of a failed ``previous``, 1 when it fails anew, 0 when it does not fail."""
    if call.id not in failed:
        return 0
    if previous is not None and _repeats(previous, call, failed):
        return length + 1
    return 1


def _repeats(previous: Call, call: Call, failed: set[str]) -> bool:
    """Whether ``call`` ran what the failed call ``previous`` ran."""
    return previous.id in failed and previous.what == call.what


@lru_cache(maxsize=65536)
def _arg(value: str | int) -> Text | Number:
    """One argument (frozen, so shared): a run's id and each call's id stand in many facts."""
    return Text(text=value) if isinstance(value, str) else Number(number=value)


def _fact(predicate: str, span: Span, *args: str | int) -> Fact:
    return Fact(predicate=predicate, args=tuple(_arg(a) for a in args), span=span)


def extract(item: CorpusItem) -> Iterator[Fact]:
    """``called``, ``next``, ``failed``, ``succ`` and ``score`` facts for the run."""
    run = item.instance
    seen = _Calls(run)
    first: Span | None = None
    for event in item.events():
        first = first or event.span
        yield from seen.facts(event)
    if first is not None:
        length, where = longest_streak(seen.calls, seen.failed)
        yield _fact("score", where or first, run, length)


@dataclass
class _Calls:
    """A run's calls so far: every agent's in order, each agent's latest, and the ids of those that
    failed."""

    run: str
    calls: list[Call] = field(default_factory=list)
    last: dict[str | None, Call] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)

    def facts(self, event: HarnessEvent) -> Iterator[Fact]:
        """The facts of one event: a tool call's, or a failure's (nothing for an event without a call id)."""
        call_id = event.tool_use_id
        if not call_id:
            return
        if event.kind is HarnessKind.TOOL_CALL:
            yield from self.called(Call(call_id, event.agent, _what(event), event.span))
        elif is_tool_error(event):
            yield from self.failure(call_id, event.span)

    def called(self, call: Call) -> Iterator[Fact]:
        """The facts of ``call`` after the calls so far; the call joins them."""
        yield _fact("called", call.span, self.run, call.id, *call.what)
        if call.agent in self.last:
            yield _fact("next", call.span, self.run, self.last[call.agent].id, call.id)
        if self.calls:
            yield _fact("succ", call.span, self.run, len(self.calls), len(self.calls) + 1)
        self.calls.append(call)
        self.last[call.agent] = call

    def failure(self, call: str, span: Span) -> Iterator[Fact]:
        """The ``failed`` fact of a call's first failure (a call's later failures add nothing)."""
        if call not in self.failed:
            self.failed.add(call)
            yield _fact("failed", span, self.run, call)


def _what(event: HarnessEvent) -> tuple[str, str]:
    """What a call ran: its tool and its input's digest."""
    return (event.tool or "", digest(event.tool_input))

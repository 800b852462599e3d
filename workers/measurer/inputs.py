"""What the measurer reads, folded from the event log into plain values (no Celery, no SQLAlchemy).

``fold`` takes ``(recorded_at, event)`` pairs in log order and keeps what the series need, as the log
stood at the instant measured: events recorded after it are ignored. A later event about the same thing
replaces an earlier one, as the ledger's projections do: the last ``RunRecorded`` of a run (a re-ingest
of a grown file), the last ``FixerSessionEnded`` of a (ticket, start), the last scope of a finding. An
accepted miner and a closed ticket count once, at their first event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from ouroboros_gates.schemas import (
    Event,
    FindingDerived,
    FixerOutcome,
    FixerSessionEnded,
    MinerAccepted,
    RunRecorded,
    Scope,
    TicketClosed,
)

__all__ = ["EVENT_TYPES", "MeasureInput", "RunCounts", "SessionCost", "Structure", "fold"]

EVENT_TYPES = frozenset(
    cls.TYPE for cls in (RunRecorded, FixerSessionEnded, MinerAccepted, TicketClosed, FindingDerived)
)
"""The event types ``fold`` reads; a reader may skip decoding any other."""


@dataclass(frozen=True)
class RunCounts:
    """One recorded run's numbers: tool calls, struggles and prompt-cache usage."""

    run: str
    started_at: datetime | None
    tool_calls: int
    tool_errors: int
    cache_read: int = 0
    prompt_tokens: int = 0
    """input + cache_creation + cache_read: the denominator of h."""


@dataclass(frozen=True)
class SessionCost:
    """One ended fixer session: when, what it cost, and whether it left a ready pull request."""

    ticket: int
    started: datetime
    ended: datetime
    cost_usd: float
    ready: bool


@dataclass(frozen=True)
class Structure:
    """One piece of structure the loop added: an accepted miner or a closed ticket, when first recorded."""

    kind: str
    """``miner`` or ``ticket``."""
    key: str
    at: datetime


@dataclass(frozen=True)
class MeasureInput:
    """Everything the series are computed from, as of ``at``."""

    at: datetime
    runs: tuple[RunCounts, ...] = ()
    sessions: tuple[SessionCost, ...] = ()
    structure: tuple[Structure, ...] = ()
    accepted: tuple[tuple[str, Scope], ...] = ()
    """(miner, scope) of every accepted miner, sorted by miner."""
    findings: tuple[tuple[str, Scope], ...] = ()
    """(key, scope) of every distinct finding (miner, rule, subject, run), sorted by key."""


@dataclass
class _Fold:
    runs: dict[str, RunCounts] = field(default_factory=dict)
    sessions: dict[tuple[int, datetime], SessionCost] = field(default_factory=dict)
    structure: dict[tuple[str, str], Structure] = field(default_factory=dict)
    accepted: dict[str, Scope] = field(default_factory=dict)
    findings: dict[str, Scope] = field(default_factory=dict)

    def add(self, recorded_at: datetime, event: Event) -> None:
        """Fold one event in; an event no series reads is passed over."""
        for kind, fold_in in _FOLDS:
            if isinstance(event, kind):
                fold_in(self, recorded_at, event)
                return

    def _run(self, recorded_at: datetime, event: RunRecorded) -> None:
        self.runs[event.run] = _run_counts(event)

    def _session(self, recorded_at: datetime, event: FixerSessionEnded) -> None:
        s = event.session
        ready = s.outcome is FixerOutcome.READY
        self.sessions[(s.ticket, s.started)] = SessionCost(s.ticket, s.started, s.ended, s.cost_usd, ready)

    def _accepted(self, recorded_at: datetime, event: MinerAccepted) -> None:
        miner = event.acceptance.miner
        self.accepted[miner] = event.acceptance.scope
        self.structure.setdefault(("miner", miner), Structure("miner", miner, recorded_at))

    def _closed(self, recorded_at: datetime, event: TicketClosed) -> None:
        key = str(event.ticket)
        self.structure.setdefault(("ticket", key), Structure("ticket", key, recorded_at))

    def _finding(self, recorded_at: datetime, event: FindingDerived) -> None:
        self.findings[_finding_key(event)] = event.finding.scope

    def result(self, at: datetime) -> MeasureInput:
        return MeasureInput(
            at=at,
            runs=tuple(self.runs[k] for k in sorted(self.runs)),
            sessions=tuple(self.sessions[k] for k in sorted(self.sessions)),
            structure=tuple(self.structure[k] for k in sorted(self.structure)),
            accepted=tuple(sorted(self.accepted.items())),
            findings=tuple(sorted(self.findings.items())),
        )


_FOLDS: tuple[tuple[type[Event], Callable[[_Fold, datetime, Any], None]], ...] = (
    (RunRecorded, _Fold._run),
    (FixerSessionEnded, _Fold._session),
    (MinerAccepted, _Fold._accepted),
    (TicketClosed, _Fold._closed),
    (FindingDerived, _Fold._finding),
)
"""How each kind of event the series read is folded in."""


def _run_counts(event: RunRecorded) -> RunCounts:
    summary, usage = event.summary, event.summary.usage
    reported = (
        summary.cache_reported
    )  # a run whose log reports no cache counts has no h_r, and adds none to h_fleet
    return RunCounts(
        run=event.run,
        started_at=summary.started_at,
        tool_calls=summary.tool_calls,
        tool_errors=summary.tool_errors,
        cache_read=usage.cache_read_input_tokens if reported else 0,
        prompt_tokens=usage.prompt_tokens if reported else 0,
    )


def _finding_key(event: FindingDerived) -> str:
    f = event.finding
    subject = [arg.to_json_dict() for arg in f.subject]
    return orjson.dumps([f.miner, f.rule, subject, event.run], option=orjson.OPT_SORT_KEYS).decode()


def fold(entries: Iterable[tuple[datetime, Event]], at: datetime) -> MeasureInput:
    """Fold ``(recorded_at, event)`` pairs, in log order, into the input of ``measure`` as of ``at``."""
    state = _Fold()
    for recorded_at, event in entries:
        if recorded_at <= at:
            state.add(recorded_at, event)
    return state.result(at)

"""Builders of the events the measurer reads, with only the fields a test cares about."""

from __future__ import annotations

from datetime import UTC, datetime

from ouroboros_gates.schemas import (
    BacktestSummary,
    Fact,
    Finding,
    FindingDerived,
    FixerOutcome,
    FixerSession,
    FixerSessionEnded,
    MinerAcceptance,
    MinerAccepted,
    RunRecorded,
    RunSummary,
    Scope,
    Severity,
    Span,
    Text,
    TicketClosed,
    Usage,
)
from ouroboros_gates.workers.measurer import MeasureInput, RunCounts, SessionCost, Structure

DIGEST = "0" * 64


def t(text: str) -> datetime:
    """An ISO instant (a ``Z`` or an offset required)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def run_recorded(
    run: str,
    started: str | None,
    calls: int = 0,
    errors: int = 0,
    *,
    read: int = 0,
    fresh: int = 0,
    created: int = 0,
) -> RunRecorded:
    """A run's summary: ``fresh`` uncached input, ``created`` cache writes, ``read`` cache reads."""
    usage = Usage(input_tokens=fresh, cache_creation_input_tokens=created, cache_read_input_tokens=read)
    summary = RunSummary(
        run=run,
        lines=calls + errors,
        malformed=0,
        tool_calls=calls,
        tool_errors=errors,
        usage=usage,
        started_at=t(started) if started else None,
    )
    return RunRecorded(run=run, path=f"{run}/events.jsonl", summary=summary, digest=DIGEST)


def session_ended(ticket: int, started: str, ended: str, cost: float, outcome: str) -> FixerSessionEnded:
    """A fixer session's end; ready and draft name pull request ``ticket + 1000``."""
    kind = FixerOutcome(outcome)
    session = FixerSession(
        ticket=ticket,
        branch=f"miner/m{ticket}-abc",
        worktree=f"/tmp/wt{ticket}",
        started=t(started),
        ended=t(ended),
        cost_usd=cost,
        outcome=kind,
        pull_request=None if kind is FixerOutcome.NO_PULL_REQUEST else ticket + 1000,
    )
    return FixerSessionEnded(session=session)


def miner_accepted(miner: str, scope: Scope = Scope.GENERIC) -> MinerAccepted:
    """An accepted miner with a passing backtest."""
    backtest = BacktestSummary(
        split_at=t("2026-10-02T18:04:45Z"),
        kappa_star=468.0,
        families=3,
        tp=1,
        fp=0,
        fn=0,
        pbo_status="waits for labels",
    )
    acceptance = MinerAcceptance(
        miner=miner, scope=scope, backtest=backtest, mutation_score=1.0, mutation_floor=0.8, test_passed=True
    )
    return MinerAccepted(acceptance=acceptance)


def ticket_closed(ticket: int) -> TicketClosed:
    """A ticket closed on pull request ``ticket + 1000``."""
    return TicketClosed(
        ticket=ticket, pull_request=ticket + 1000, reason="Backtest FN 0; every check row exits 0"
    )


def finding_derived(miner: str, run: str, scope: Scope, subject: str = "s") -> FindingDerived:
    """A finding with a one-fact proof."""
    fact = Fact(predicate="gated", args=(Text(text=run),), span=Span(file=f"{run}/events.jsonl", line=1))
    finding = Finding(
        miner=miner,
        rule="invisible",
        subject=(Text(text=subject),),
        severity=Severity.S3,
        proof=(fact,),
        scope=scope,
    )
    return FindingDerived(run=run, finding=finding)


def runs_input(at: str, *runs: tuple[str, str | None, int, int]) -> MeasureInput:
    """An input of runs (run, started, tool calls, tool errors) only."""
    counts = tuple(RunCounts(r, t(s) if s else None, c, e) for r, s, c, e in runs)
    return MeasureInput(at=t(at), runs=counts)


def session(ticket: int, started: str, ended: str, cost: float, ready: bool) -> SessionCost:
    """A folded fixer session."""
    return SessionCost(ticket, t(started), t(ended), cost, ready)


def structure(kind: str, key: str, at: str) -> Structure:
    """A folded accepted miner or closed ticket."""
    return Structure(kind, key, t(at))

"""One fixer session: reserve, check out, brief, run the agent sandboxed, bring its branch back, settle.

The session's stdout (the agent's stream-json) is written line by line to
``<state>/fixers/<slug>/events.jsonl``, where the miner ingests it as a run, and folded as it arrives:
the agent is stopped at the first reading whose folded cost reaches the session's reservation, and the
budget charges the cap at most the reservation, the rest recorded as the session's overrun. Spend the
sandbox could not report (the agent killed with its task at the time limit, its worker lost, an agent that
failed or printed no cost) is settled at an estimate, at least the whole reservation, and the session
record says so (``cost_estimated``). The agent
works in a clone of its own (``checkout``), in the sandbox (``sandbox``), reaching only the allow-listed
hosts (``OURO_FIXER_HOSTS``) through the worker's proxy. After its one turn the outcome is read from its
pull request: the one opened from its branch, ready or draft, or none.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded

from ouroboros_gates.events.budget import Budget, Settlement
from ouroboros_gates.forge import PullRequest, WritableForge
from ouroboros_gates.schemas import FixerOutcome, FixerSession, PrecheckVerdict, content_id
from ouroboros_gates.schemas.errors import ConfigurationError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.fixer.agent import run_agent
from ouroboros_gates.workers.fixer.budget import LiveCost, folded_cost
from ouroboros_gates.workers.fixer.checkout import bring_back, check_out
from ouroboros_gates.workers.fixer.proxy import AllowedHost, allowed_hosts
from ouroboros_gates.workers.fixer.sandbox import Mounts, Sandbox, agent_environment, grant

__all__ = [
    "ForgePaths",
    "SessionPlan",
    "SessionRun",
    "brief_for",
    "outcome_of",
    "plan_session",
    "run_session",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ForgePaths:
    """A local forge's folders the agent works with: its documents (read) and its writes directory."""

    reads: Path
    writes: Path


@dataclass(frozen=True)
class SessionPlan:
    """Where a session works: its branch, worktree and log."""

    ticket: int
    branch: str
    slug: str
    worktree: Path
    log: Path


@dataclass(frozen=True)
class SessionRun:
    """A closed session: its record, its run id and log, and how it stopped."""

    session: FixerSession
    run: str
    log: Path
    stopped: str


def plan_session(verdict: PrecheckVerdict, state_dir: Path) -> SessionPlan:
    """``miner/<name>-<assignment prefix>`` (the prefix follows the ticket and its proposal)."""
    name = (verdict.miner or f"ticket-{verdict.ticket}").replace("_", "-")
    prefix = content_id("fixer", str(verdict.ticket), str(verdict.proposal or 0))[:8]
    slug = f"{name}-{prefix}"
    home = state_dir / "fixers" / slug
    return SessionPlan(verdict.ticket, f"miner/{slug}", slug, home / "worktree", home / "events.jsonl")


def brief_for(verdict: PrecheckVerdict, plan: SessionPlan) -> str:
    """The agent's brief: the ticket, the branch, and the instances the pre-check found."""
    found = verdict.instances_found or verdict.instances_named
    instances = "\n".join(f"- {instance}" for instance in found)
    return (
        f"Fix ticket #{verdict.ticket}: write the miner {verdict.miner or '(named in the proposal)'}.\n"
        f"Work on branch {plan.branch} in this worktree; commit with the CSF-Session and CSF-Model "
        "trailers.\n"
        "The pre-check found these labelled instances in the corpus; use them as your "
        f"fixtures:\n{instances}\n"
        "Run the miner's test, then open a draft pull request; mark it ready only when the merge check"
        " passes. Never merge."
    )


def outcome_of(forge: WritableForge, branch: str) -> tuple[FixerOutcome, PullRequest | None]:
    """The session's pull request (opened from ``branch``; the newest if several) and its state."""
    pulls = [p for p in forge.pull_requests() if p.head_ref == branch]
    if not pulls:
        return FixerOutcome.NO_PULL_REQUEST, None
    pull = max(pulls, key=lambda p: p.number)
    return (FixerOutcome.DRAFT if pull.draft else FixerOutcome.READY), pull


def run_session(
    verdict: PrecheckVerdict,
    *,
    settings: Settings,
    forge: WritableForge,
    git_dir: Path,
    budget: Budget,
    sandbox: Sandbox | None,
    now: Callable[[], datetime],
    forge_paths: ForgePaths | None = None,
) -> SessionRun | str:
    """Run one session on a launched ticket; the refusal reason when it may not start."""
    if not settings.fixers:
        return "fixers are off: launch them with --fixers (OURO_FIXERS=1)"
    if sandbox is None:
        return "no sandbox: fixers launch unattended only when sandboxed launch is available"
    try:
        hosts = allowed_hosts(settings)
    except ConfigurationError as exc:
        return str(exc)
    started = now()
    reservation = budget.reserve(verdict.ticket, settings.fixer_session_usd, started)
    plan = plan_session(verdict, settings.state_dir)
    if not reservation.granted:
        lost = budget.unsettled(verdict.ticket)
        if lost is None or not plan.log.is_file():
            return reservation.reason
        with _held(plan) as held:
            if not held:
                return f"ticket #{verdict.ticket}'s fixer session is running"
            # A redelivered launch whose worker died mid-session (its agent with it, cut off): close that
            # session from its log, once, at the estimate.
            spent = folded_cost(plan.log.read_bytes().splitlines())
            settled = budget.settle(verdict.ticket, spent, reported=False)
            _bring_back(git_dir, plan)
            stopped = "closed after its worker was lost"
            return _closed(verdict, plan, forge, (lost, now()), settled, stopped, sandbox.isolation)
    with _held(plan) as held:
        if not held:
            return f"ticket #{verdict.ticket}'s fixer session is running"
        session = _Session(verdict, plan, settings, sandbox, hosts, forge_paths)
        stopped, settled = _launch(session, git_dir, budget, reservation.amount_usd)
    return _closed(verdict, plan, forge, (started, now()), settled, stopped, sandbox.isolation)


@contextmanager
def _held(plan: SessionPlan) -> Iterator[bool]:
    """The session's lock (held while its agent runs; the OS drops it with a lost worker): True if taken."""
    plan.worktree.parent.mkdir(parents=True, exist_ok=True)
    with (plan.worktree.parent / "session.lock").open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True


@dataclass(frozen=True)
class _Session:
    """What one launch runs with."""

    verdict: PrecheckVerdict
    plan: SessionPlan
    settings: Settings
    sandbox: Sandbox
    hosts: tuple[AllowedHost, ...]
    forge_paths: ForgePaths | None


def _launch(session: _Session, git_dir: Path, budget: Budget, limit_usd: float) -> tuple[str, Settlement]:
    """Checkout, brief, sandboxed agent, branch brought back; the budget is settled whatever happens, at the
    estimate when the agent was cut off (whatever stopped it: its spend is never taken as nothing). The
    task's time limit kills the agent and closes the session (recorded like any other)."""
    plan, ticket = session.plan, session.verdict.ticket
    cost, reported, stopped = LiveCost(), True, "it never started"
    try:
        check_out(git_dir, plan.worktree, plan.branch)
        mounts, extra = _mounts(session)
        grant(session.sandbox, plan.worktree, *mounts.writable)
        argv = [*shlex.split(session.settings.fixer_command), brief_for(session.verdict, plan)]
        env = agent_environment(os.environ, plan.worktree, extra)
        log.info("fixer #%d sandboxed by %s", ticket, session.sandbox.isolation)
        reported = False  # from here on, an agent that was started may have spent what it never said
        try:
            ran = run_agent(
                session.sandbox,
                argv,
                mounts,
                env,
                hosts=session.hosts,
                log=plan.log,
                limit_usd=limit_usd,
                cost=cost,
            )
        except SoftTimeLimitExceeded:  # the agent is killed (run_agent); the session is closed all the same
            stopped = f"killed at the task's time limit (${cost.total:.2f} reported before)"
        else:
            stopped, reported = ran.stopped, ran.reported
        _bring_back(git_dir, plan)
    finally:
        settled = budget.settle(ticket, cost.total, reported=reported)
        if settled.estimated:
            log.warning("fixer #%d: spend not reported in full; settled at $%.2f", ticket, settled.spent_usd)
    return stopped, settled


def _mounts(session: _Session) -> tuple[Mounts, dict[str, str]]:
    """The session's mounts and the variables it adds to the agent's environment."""
    plan, paths = session.plan, session.forge_paths
    extra = {"OURO_FIXER_BRANCH": plan.branch, "OURO_FIXER_TICKET": str(session.verdict.ticket)}
    if paths is None:
        return Mounts(plan.worktree, hidden=(session.settings.state_dir,)), extra
    paths.writes.mkdir(parents=True, exist_ok=True)
    extra |= {"OURO_FORGE_WRITES": str(paths.writes), "OURO_FORGE_DIR": str(paths.reads)}
    mounts = Mounts(
        plan.worktree, writable=(paths.writes,), readable=(paths.reads,), hidden=(session.settings.state_dir,)
    )
    return mounts, extra


def _bring_back(git_dir: Path, plan: SessionPlan) -> None:
    if plan.worktree.is_dir():
        log.info("fixer #%d: %s", plan.ticket, bring_back(git_dir, plan.worktree, plan.branch))


def _closed(
    verdict: PrecheckVerdict,
    plan: SessionPlan,
    forge: WritableForge,
    span: tuple[datetime, datetime],
    settled: Settlement,
    stopped: str,
    isolation: str,
) -> SessionRun:
    """The closed session, its outcome read from its pull request, its cost as the budget settled it."""
    outcome, pull = outcome_of(forge, plan.branch)
    session = FixerSession(
        ticket=verdict.ticket,
        branch=plan.branch,
        worktree=str(plan.worktree),
        started=span[0],
        ended=span[1],
        cost_usd=round(settled.spent_usd, 6),
        overrun_usd=round(settled.overrun_usd, 6),
        cost_estimated=settled.estimated,
        outcome=outcome,
        pull_request=None if pull is None else pull.number,
        isolation=isolation,
    )
    return SessionRun(session, plan.slug, plan.log, stopped)

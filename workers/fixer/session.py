"""One fixer session: reserve, branch and worktree, brief, run the agent sandboxed, settle, read the PR.

The session's stdout (the agent's stream-json) is written line by line to
``<state>/fixers/<slug>/events.jsonl``, where the miner ingests it as a run, and folded as it arrives:
the agent is stopped at the first reading whose folded cost reaches the session's reservation, so a
session overruns its reservation by at most one reading's step, and settles what it really spent.
After its one turn the outcome is read from its pull request: the one opened from its branch, ready or
draft, or none.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import subprocess
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ouroboros_gates.events.budget import Budget
from ouroboros_gates.forge import PullRequest, WritableForge
from ouroboros_gates.forge.git import git
from ouroboros_gates.schemas import FixerOutcome, FixerSession, PrecheckVerdict, content_id
from ouroboros_gates.schemas.errors import PermanentError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.fixer.budget import LiveCost, folded_cost
from ouroboros_gates.workers.fixer.sandbox import Sandbox

__all__ = ["SessionPlan", "SessionRun", "brief_for", "outcome_of", "plan_session", "run_session"]

_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


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
        f"Work on branch {plan.branch} in this worktree; commit with the CSF-Session and CSF-Model trailers.\n"
        f"The pre-check found these labelled instances in the corpus; use them as your fixtures:\n{instances}\n"
        "Run the miner's test, then open a draft pull request; mark it ready only when the merge check"
        " passes. Never merge."
    )


def _git(git_dir: Path, *args: str) -> None:
    git(*args, cwd=git_dir, user_config=True)


def _common_dir(git_dir: Path) -> Path:
    """Where a worktree's commits land: the repository's git directory (not a checkout's work tree)."""
    done = git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=git_dir, check=False, user_config=True)
    if done.returncode != 0:
        raise PermanentError(f"{git_dir}: not a git repository: {done.stderr.decode('utf-8', 'replace').strip()}")
    return Path(done.stdout.decode().strip())


def _worktree(git_dir: Path, plan: SessionPlan, base: str) -> None:
    if plan.worktree.is_dir():
        raise PermanentError(f"ticket #{plan.ticket} already has a worktree at {plan.worktree}")
    plan.worktree.parent.mkdir(parents=True, exist_ok=True)
    _git(git_dir, "worktree", "add", "--quiet", "-b", plan.branch, str(plan.worktree), base)


def outcome_of(forge: WritableForge, branch: str) -> tuple[FixerOutcome, PullRequest | None]:
    """The session's pull request (opened from ``branch``; the newest if several) and its state."""
    pulls = [p for p in forge.pull_requests() if p.head_ref == branch]
    if not pulls:
        return FixerOutcome.NO_PULL_REQUEST, None
    pull = max(pulls, key=lambda p: p.number)
    return (FixerOutcome.DRAFT if pull.draft else FixerOutcome.READY), pull


def _spawn(argv: list[str], cwd: Path, env: Mapping[str, str] | None) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
    except OSError as exc:
        raise PermanentError(f"cannot start the fixer agent {argv[0]!r}: {exc}") from exc


def _run_agent(
    argv: list[str], plan: SessionPlan, env: Mapping[str, str] | None, limit_usd: float
) -> tuple[float, str]:
    """Run the agent, logging and folding its stdout; stop it at the reservation. (cost, how it stopped)"""
    cost, stopped = LiveCost(), "its turn ended"
    process = _spawn(argv, plan.worktree, env)
    assert process.stdout is not None
    try:
        with plan.log.open("ab") as log:
            for line in process.stdout:
                log.write(line if line.endswith(b"\n") else line + b"\n")
                log.flush()
                cost.feed(line)
                if cost.total >= limit_usd:
                    stopped = f"stopped at its reservation (${cost.total:.2f} of ${limit_usd:.2f})"
                    process.terminate()
                    break
    except BaseException:  # the task's time limit, a stop: the agent does not outlive its task
        process.kill()
        process.wait()
        raise
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return cost.total, stopped  # what the last reading said, even past the reservation: the ledger is honest


def run_session(
    verdict: PrecheckVerdict,
    *,
    settings: Settings,
    forge: WritableForge,
    git_dir: Path,
    budget: Budget,
    sandbox: Sandbox | None,
    now: Callable[[], datetime],
    forge_writes: Path | None = None,
) -> SessionRun | str:
    """Run one session on a launched ticket; the refusal reason when it may not start."""
    if not settings.fixers:
        return "fixers are off: launch them with --fixers (OURO_FIXERS=1)"
    if sandbox is None:
        return "no sandbox: fixers launch unattended only when sandboxed launch is available"
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
            # A redelivered launch whose worker died mid-session: close that session from its log, once.
            spent, stopped = folded_cost(plan.log.read_bytes().splitlines()), "closed after its worker was lost"
            budget.settle(verdict.ticket, spent)
            return _closed(verdict, plan, forge, lost, now(), spent, stopped)
    with _held(plan) as held:
        if not held:
            return f"ticket #{verdict.ticket}'s fixer session is running"
        limit = reservation.amount_usd
        spent, stopped = _launch(verdict, plan, settings, git_dir, budget, sandbox, forge_writes, limit)
    return _closed(verdict, plan, forge, started, now(), spent, stopped)


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


def _launch(
    verdict: PrecheckVerdict, plan: SessionPlan, settings: Settings, git_dir: Path, budget: Budget,
    sandbox: Sandbox, forge_writes: Path | None, limit_usd: float,
) -> tuple[float, str]:  # fmt: skip
    """Worktree, brief, sandboxed agent; the budget is settled whatever happens. (spent, how it stopped)"""
    spent = 0.0
    try:
        _worktree(git_dir, plan, "main")
        argv = [*shlex.split(settings.fixer_command), brief_for(verdict, plan)]
        scratch = plan.worktree.parent / "tmp"
        scratch.mkdir(exist_ok=True)
        extra = {"OURO_FIXER_BRANCH": plan.branch, "OURO_FIXER_TICKET": str(verdict.ticket), "TMPDIR": str(scratch)}
        if forge_writes is not None:
            forge_writes.mkdir(parents=True, exist_ok=True)
            extra["OURO_FORGE_WRITES"] = str(forge_writes)
        writable = [scratch, _common_dir(git_dir), *([forge_writes] if forge_writes is not None else [])]
        wrapped = sandbox.wrap(
            argv, worktree=plan.worktree, writable=writable, hidden=[settings.state_dir],
            environ=os.environ, extra_env=extra,
        )  # fmt: skip
        spent, stopped = _run_agent(wrapped, plan, None, limit_usd)
    finally:
        budget.settle(verdict.ticket, spent)
    return spent, stopped


def _closed(
    verdict: PrecheckVerdict, plan: SessionPlan, forge: WritableForge, started: datetime, ended: datetime,
    spent: float, stopped: str,
) -> SessionRun:  # fmt: skip
    """The closed session, its outcome read from its pull request."""
    outcome, pull = outcome_of(forge, plan.branch)
    session = FixerSession(
        ticket=verdict.ticket, branch=plan.branch, worktree=str(plan.worktree), started=started, ended=ended,
        cost_usd=round(spent, 6), outcome=outcome, pull_request=None if pull is None else pull.number,
    )  # fmt: skip
    return SessionRun(session, plan.slug, plan.log, stopped)

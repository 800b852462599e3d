"""Celery task of the fixer (thin: run one session, append its end, ask the miner to ingest its log)."""

from __future__ import annotations

import logging

from ouroboros_gates.events import utcnow
from ouroboros_gates.forge import LocalForge
from ouroboros_gates.forge.factory import open_forge
from ouroboros_gates.schemas import FixerSessionEnded, IngestRun, LaunchFixer, content_id
from ouroboros_gates.workers.fixer.budget import budget_for
from ouroboros_gates.workers.fixer.sandbox import find_sandbox
from ouroboros_gates.workers.fixer.session import ForgePaths, SessionRun, run_session
from ouroboros_gates.workers.shell import Context, Outcome, fleet_task

log = logging.getLogger(__name__)


@fleet_task(LaunchFixer)
def launch(message: LaunchFixer, ctx: Context) -> Outcome:
    """fixer.launch: one sandboxed session under the daily budget; nothing is appended when it may not
    start."""
    forge = open_forge(ctx.settings)
    local = forge if isinstance(forge, LocalForge) else None
    git_dir = local.git_dir() if local is not None else ctx.settings.repository
    if git_dir is None:
        log.warning("fixer.launch #%d: OURO_REPOSITORY names no checkout to branch from", message.ticket)
        return Outcome()
    sandbox, _why = find_sandbox()
    budget = budget_for(ctx.store.side_tables, ctx.settings)
    result = run_session(
        message.verdict,
        settings=ctx.settings,
        forge=forge,
        git_dir=git_dir,
        budget=budget,
        sandbox=sandbox,
        now=utcnow,
        forge_paths=_forge_paths(local),
    )
    if not isinstance(result, SessionRun):
        log.warning("fixer.launch #%d not started: %s", message.ticket, result)
        return Outcome()
    return Outcome.single(
        f"ticket/{message.ticket}",
        FixerSessionEnded(session=result.session),
        follow_ups=(ingest_message(message, result),),
    )


def _forge_paths(local: LocalForge | None) -> ForgePaths | None:
    """A local forge's folders, shown to the agent (it opens its pull request by writing one there)."""
    if local is None or local.writes_dir is None:
        return None
    return ForgePaths(reads=local.forge_dir, writes=local.writes_dir)


def ingest_message(message: LaunchFixer, result: SessionRun) -> IngestRun:
    """The follow-up that records the session's log as a run, through the miner's ingest."""
    return IngestRun(
        message_id=content_id("fixer-run", result.run),
        correlation_id=message.correlation_id or message.message_id,
        causation_id=message.message_id,
        tenant=message.tenant,
        path=str(result.log),
        run=result.run,
    )

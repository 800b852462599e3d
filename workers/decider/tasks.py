"""Celery task of the decider (thin: validate, locate the repository, decide, append)."""

from __future__ import annotations

from pathlib import Path

from ouroboros_gates.decider.memory import MemoryStore
from ouroboros_gates.decider.push import decide_repository
from ouroboros_gates.forge import LocalForge, open_forge
from ouroboros_gates.schemas import DecidePush, DecisionMade
from ouroboros_gates.schemas.errors import PermanentError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.miner.ingest import confine
from ouroboros_gates.workers.shell import Context, Outcome, fleet_task

NEW_REF = "0" * 40


def locate(message: DecidePush, settings: Settings) -> Path:
    """The checkout the message names (confined to the roots), else the local forge's repository."""
    if message.path is not None:
        return confine(message.path, settings)
    forge = open_forge(settings)  # the same clone the fixers and the merge train write to
    if not isinstance(forge, LocalForge) or not (Path(settings.forge) / "repo.bundle").exists():
        raise PermanentError(f"push of {message.repo}: no checkout named and no local forge at {settings.forge}")
    return forge.git_dir()


@fleet_task(DecidePush)
def decide(message: DecidePush, ctx: Context) -> Outcome:
    """decider.decide: one ``DecisionMade`` per candidate of the push, on ``push/<head>``."""
    base = None if message.base == NEW_REF else message.base
    run, _lookup = decide_repository(
        ctx.settings, locate(message, ctx.settings), message.repo, message.head, base,
        store=MemoryStore(ctx.store.engine), deadline_s=ctx.settings.decider_deadline_s, priors=message.priors,
    )  # fmt: skip
    return Outcome.single(f"push/{message.head}", *(DecisionMade(decision=d.decision) for d in run.decided))

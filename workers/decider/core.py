"""The decider worker's core, free of Celery: ``decider.decide`` runs it in a worker, ``ouro pre-push`` in its
own process (no worker to start), and both append what it returns as the answer to the ``DecidePush``."""

from __future__ import annotations

from pathlib import Path

from ouroboros_gates.decider.memory import MemoryStore
from ouroboros_gates.decider.push import decide_repository
from ouroboros_gates.decider.report import flows
from ouroboros_gates.events import EventStore
from ouroboros_gates.forge import LocalForge, open_forge
from ouroboros_gates.schemas import NULL_COMMIT, DecidePush, DecisionMade
from ouroboros_gates.schemas.errors import PermanentError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.paths import confine

__all__ = ["decide_push", "locate"]


def locate(message: DecidePush, settings: Settings) -> Path:
    """The checkout the message names (confined to the roots), else the local forge's repository."""
    if message.path is not None:
        return confine(message.path, settings)
    forge = open_forge(settings)  # the same clone the fixers and the merge train write to
    if not isinstance(forge, LocalForge) or not (Path(settings.forge) / "repo.bundle").exists():
        raise PermanentError(
            f"push of {message.repo}: no checkout named and no local forge at {settings.forge}"
        )
    return forge.git_dir()


def decide_push(message: DecidePush, settings: Settings, store: EventStore) -> tuple[str, list[DecisionMade]]:
    """One ``DecisionMade`` per candidate of the push, and the stream they go to (``push/<head>``)."""
    base = None if message.base == NULL_COMMIT else message.base
    run, _lookup = decide_repository(
        settings,
        locate(message, settings),
        message.repo,
        message.head,
        base,
        store=MemoryStore(store.side_tables),
        deadline_s=settings.decider_deadline_s,
        priors=message.priors,
    )
    return f"push/{message.head}", [DecisionMade(decision=d.decision, flows=flows(d)) for d in run.decided]

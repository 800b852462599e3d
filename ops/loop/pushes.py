"""The main job's example pushes: the local forge's ``pushes.jsonl`` (beside ``repo.bundle``), each recorded
once as ``PushReceived`` with its ``DecidePush`` in the outbox, and decided by the decider worker."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ouroboros_gates.events import LedgerStore
from ouroboros_gates.ops.embedded import SharedFleet
from ouroboros_gates.ops.loop.queue import Handled, tasks, through_queue
from ouroboros_gates.ops.pushes import Push, handled, push_message, record_push
from ouroboros_gates.schemas.errors import OuroError
from ouroboros_gates.schemas.settings import Settings

if TYPE_CHECKING:
    from ouroboros_gates.schemas import DecidePush

__all__ = ["DECIDE_WAIT_S", "decide_step", "forge_pushes"]

DECIDE_WAIT_S = 120.0
"""How long the example pushes may take to be decided, together."""


def forge_pushes(settings: Settings) -> list[Push]:
    """The pushes of the local forge's repository (``pushes.jsonl`` beside ``repo.bundle``)."""
    path = settings.forge_folder / "pushes.jsonl"
    if not path.exists():
        return []
    pushes = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                row = json.loads(line)
                pushes.append(Push(row["repo"], row["ref"], row["base"], row["head"]))
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise OuroError(f"{path}:{number}: not a push {{repo, ref, base, head}}: {exc}") from exc
    return pushes


def decide_step(store: LedgerStore, settings: Settings, shared: SharedFleet | None = None) -> Handled:
    """Record each forge push not decided yet and let the decider worker decide it (a second run records
    and publishes nothing)."""
    pairs = [(p, push_message(p, settings.tenant)) for p in forge_pushes(settings)]
    pending = _undecided(store, pairs)
    if not pending:
        return Handled(before=tuple(m.message_id for _p, m in pairs))
    _record(store, pending)
    waiting = tasks(m for _p, m in pending)
    return through_queue(
        store, settings, ["decider"], shared, waiting=waiting, relay=True, timeout_s=DECIDE_WAIT_S
    )


def _record(store: LedgerStore, pending: list[tuple[Push, DecidePush]]) -> None:
    """Record each push (``PushReceived``, its ``DecidePush`` in the outbox)."""
    for push, message in pending:
        record_push(store, push, message)


def _undecided(store: LedgerStore, pairs: list[tuple[Push, DecidePush]]) -> list[tuple[Push, DecidePush]]:
    """The pushes whose message the decider has not handled yet, in order."""
    return [(p, m) for p, m in pairs if not handled(store, m.message_id)]

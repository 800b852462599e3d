"""Pushes for the decider: git's pre-push lines, ``PushReceived`` + ``DecidePush`` through the outbox, and
the decisions read back from ``push/<head>`` (used by ``ouro pre-push`` and the main job)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ouroboros_gates.events import Metadata, SqlEventStore, StreamWrite
from ouroboros_gates.forge.git import git
from ouroboros_gates.schemas import DecidePush, Decision, DecisionMade, PushReceived, content_id
from ouroboros_gates.schemas.errors import OuroError
from ouroboros_gates.schemas.settings import Settings

if TYPE_CHECKING:
    from ouroboros_gates.ops.embedded import SharedFleet

__all__ = [
    "NEW",
    "Push",
    "decide_through_queue",
    "decisions_of",
    "forge_pushes",
    "parse_pre_push",
    "push_message",
    "record_push",
    "relay",
    "wait_decided",
]

NEW = "0" * 40
TASK = DecidePush.TASK


@dataclass(frozen=True)
class Push:
    """One ref of a push: what the remote has (``base``, zeros for a new ref) and what is pushed."""

    repo: str
    ref: str
    base: str
    head: str
    path: str | None = None


def parse_pre_push(lines: Iterable[str], repo: str, path: str | None) -> list[Push]:
    """git's pre-push stdin: ``<local ref> <local sha> <remote ref> <remote sha>`` per line; deletions
    (a local sha of zeros) are skipped. A malformed line is an error naming its line number."""
    pushes = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 4 or not all(len(p) == 40 and all(c in "0123456789abcdef" for c in p) for p in parts[1::2]):
            raise OuroError(f"stdin:{number}: expected '<local ref> <local sha> <remote ref> <remote sha>'")
        _local_ref, local_sha, remote_ref, remote_sha = parts
        if local_sha != NEW:
            pushes.append(Push(repo, remote_ref, remote_sha, local_sha, path))
    return pushes


def new_ref_base(repo: Path, head: str) -> str:
    """For a new ref, the parent of the oldest commit no remote has (zeros when every commit is new)."""
    unpushed = git("rev-list", "--reverse", head, "--not", "--remotes", cwd=repo, check=False, user_config=True)
    listed = unpushed.stdout.decode("utf-8", "replace").split()
    if not listed:
        return head
    found = git("rev-parse", "--verify", "--quiet", f"{listed[0]}^", cwd=repo, check=False, user_config=True)
    return found.stdout.decode("utf-8", "replace").strip() or NEW


def push_message(push: Push, tenant: str) -> DecidePush:
    """The decider's message for a push; its id comes from the push, so a repeat is recognised."""
    return DecidePush(
        message_id=content_id("decide", push.repo, push.ref, push.base, push.head, push.path), tenant=tenant,
        repo=push.repo, base=push.base, head=push.head, ref=push.ref, path=push.path,
    )  # fmt: skip


def record_push(store: SqlEventStore, push: Push, message: DecidePush) -> bool:
    """Append ``PushReceived`` on ``push/<head>`` with the ``DecidePush`` in the same transaction (outbox).
    Returns False when this push was recorded before."""
    event = PushReceived(repo=push.repo, base=push.base, head=push.head, ref=push.ref)
    meta = Metadata(producer="ouro.pre-push", message_id=message.message_id, tenant=message.tenant)
    result = store.commit([StreamWrite(f"push/{push.head}", [event])], meta, [message])
    return not result.duplicate


def relay(store: SqlEventStore, settings: Settings) -> int:
    """Publish the outbox on the broker these settings name (not the one the process started with)."""
    from ouroboros_gates.workers import build_app, relay_outbox

    return relay_outbox(store, limit=1000, publisher=build_app(settings, include=False))


def handled(store: SqlEventStore, message_id: str) -> bool:
    """Whether the decider handled (or rejected, or dead-lettered) the message."""
    from ouroboros_gates.ops.embedded import settled

    return settled(store, TASK, message_id)


def wait_decided(store: SqlEventStore, message_ids: list[str], deadline_s: float, alive: object = None) -> list[str]:
    """Wait up to ``deadline_s`` for every message; returns those still undecided."""
    end = time.monotonic() + deadline_s
    left = [m for m in message_ids if not handled(store, m)]
    while left and time.monotonic() < end:
        if callable(alive) and not alive():
            break
        time.sleep(0.1)
        left = [m for m in left if not handled(store, m)]
    return left


def decisions_of(store: SqlEventStore, head: str, message_id: str | None = None) -> list[Decision]:
    """The decisions recorded on ``push/<head>`` (those answering one message, when given)."""
    found = []
    for event in store.read_stream(f"push/{head}"):
        if event.type == DecisionMade.TYPE and (message_id is None or event.meta.get("message_id") == message_id):
            found.append(DecisionMade.model_validate(event.payload).decision)
    return found


def forge_pushes(settings: Settings) -> list[Push]:
    """The pushes of the local forge's repository (``pushes.jsonl`` beside ``repo.bundle``)."""
    import json

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


def decide_through_queue(store: SqlEventStore, settings: Settings, shared: SharedFleet | None = None) -> list[str]:
    """Record each forge push not decided yet and let the decider worker decide it; returns the message
    ids not handled in time (a second run records and publishes nothing)."""
    from ouroboros_gates.ops.embedded import fleet_for

    pairs = [(p, push_message(p, settings.tenant)) for p in forge_pushes(settings)]
    pending = [(p, m) for p, m in pairs if not handled(store, m.message_id)]
    if not pending:
        return []
    for push, message in pending:
        record_push(store, push, message)
    with fleet_for(shared, settings, ["decider"]) as fleet:
        relay(store, settings)
        return wait_decided(store, [m.message_id for _p, m in pending], 120.0, fleet.alive)

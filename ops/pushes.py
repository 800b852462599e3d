"""Pushes for the decider: the refs of a push (git's pre-push lines, or the variables pre-commit sets:
``ops.push_refs``), the push decided in this process or through the decider's queue, and the decisions read
back from ``push/<head>``; ``pre_push`` is what ``ouro pre-push`` runs, end to end (the main job decides its
example pushes through ``ops.loop``).

Either way the log holds the same events: ``PushReceived`` on ``push/<head>`` (written by ``ouro.pre-push``),
then one ``DecisionMade`` per candidate written as the decider's answer to the push's ``DecidePush`` (so
``is_handled`` knows it, and a worker given the same message later appends nothing). In this process the
decider worker's own core runs (``workers.decider.tasks``); through the queue the message goes out through the
outbox and a worker answers it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, TextIO

from ouroboros_gates.events import EventStore, LedgerStore, Metadata, StoredEvent, StreamWrite
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import catch_up
from ouroboros_gates.forge.checkout import query, repo_key
from ouroboros_gates.ops.push_refs import Push, new_ref_base, parse_pre_push, pre_commit_pushes, read_pushes
from ouroboros_gates.schemas import (
    Action,
    DecidePush,
    Decision,
    DecisionMade,
    PushReceived,
    content_id,
)
from ouroboros_gates.schemas.settings import Settings

__all__ = [
    "Decided",
    "PrePush",
    "Push",
    "RefDecided",
    "Via",
    "decide_pushes",
    "decisions_of",
    "handled",
    "new_ref_base",
    "parse_pre_push",
    "pre_commit_pushes",
    "pre_push",
    "push_message",
    "read_pushes",
    "record_push",
    "relay",
    "wait_decided",
    "worker_serves",
]

TASK = DecidePush.TASK
PRODUCER = "ouro.pre-push"


def push_message(push: Push, tenant: str) -> DecidePush:
    """The decider's message for a push; its id comes from the push, so a repeat is recognised."""
    return DecidePush(
        message_id=content_id("decide", push.repo, push.ref, push.base, push.head, push.path),
        tenant=tenant,
        repo=push.repo,
        base=push.base,
        head=push.head,
        ref=push.ref,
        path=push.path,
    )


def record_push(store: EventStore, push: Push, message: DecidePush, queued: bool = True) -> bool:
    """Append ``PushReceived`` on ``push/<head>``, with the ``DecidePush`` in the same transaction (outbox)
    when ``queued``. Returns False when this push was recorded before."""
    event = PushReceived(repo=push.repo, base=push.base, head=push.head, ref=push.ref)
    meta = Metadata(producer=PRODUCER, message_id=message.message_id, tenant=message.tenant)
    result = store.commit([StreamWrite(f"push/{push.head}", [event])], meta, [message] if queued else [])
    return not result.duplicate


def relay(store: EventStore, settings: Settings) -> int:
    """Publish the outbox on the broker these settings name (not the one the process started with)."""
    from ouroboros_gates.workers import build_app, relay_outbox

    return relay_outbox(store, limit=1000, publisher=build_app(settings, include=False))


def handled(store: EventStore, message_id: str) -> bool:
    """Whether the decider handled (or rejected, or dead-lettered) the message."""
    from ouroboros_gates.ops.embedded import settled

    return settled(store, TASK, message_id)


def wait_decided(
    store: EventStore, message_ids: list[str], deadline_s: float, alive: object = None
) -> list[str]:
    """Wait up to ``deadline_s`` for every message; returns those still undecided."""
    end = time.monotonic() + deadline_s
    left = _undecided(store, message_ids)
    while left and time.monotonic() < end:
        if _has_stopped(alive):
            break
        time.sleep(0.1)
        left = _undecided(store, left)
    return left


def _undecided(store: EventStore, message_ids: list[str]) -> list[str]:
    """The messages the decider has not handled yet, in order."""
    return [m for m in message_ids if not handled(store, m)]


def _has_stopped(alive: object) -> bool:
    """Whether the worker waited on has stopped (``alive`` says, when given)."""
    return callable(alive) and not alive()


class Via(StrEnum):
    """Where ``ouro pre-push`` has a push decided."""

    AUTO = "auto"
    """Through the queue when a running worker serves it (on a broker that can say so), else here."""
    HERE = "here"
    """In this process, with the decider worker's own core: no worker to start."""
    QUEUE = "queue"
    """Through the decider's queue; on the embedded default a worker is started for the push when none
    runs."""


@dataclass(frozen=True)
class Decided:
    """How a push's refs went: who decided them, the messages not decided by the deadline, and those whose
    decision failed (with why)."""

    by: str
    late: frozenset[str] = frozenset()
    failed: Mapping[str, str] = field(default_factory=dict)


def worker_serves(settings: Settings, queue: str = "decider", timeout_s: float = 0.5) -> bool:
    """Whether a running worker consumes ``queue``: asked over the broker's broadcast, answered within
    ``timeout_s``. The embedded transport has no broadcast, so there no worker can say it runs: False."""
    if settings.embedded:
        return False
    from ouroboros_gates.workers import build_app

    app = build_app(settings, include=False)
    app.conf.broker_connection_retry = False  # a broker that is down is an answer (no), not a wait
    app.conf.broker_connection_timeout = timeout_s
    try:
        replies = app.control.inspect(timeout=timeout_s).active_queues() or {}
    except Exception:  # the broker's own error types vary by transport: none answered
        return False
    return _consumes(replies, queue)


def _consumes(replies: dict[str, Any], queue: str) -> bool:
    """Whether a worker's reply to ``active_queues`` lists ``queue``."""
    return any(entry.get("name") == queue for queues in replies.values() for entry in queues or ())


def decide_pushes(
    store: EventStore,
    settings: Settings,
    pairs: list[tuple[Push, DecidePush]],
    deadline_s: float,
    via: Via,
) -> Decided:
    """Decide each push within ``deadline_s``: in this process, or through the queue (``via``)."""
    if via is Via.QUEUE or (via is Via.AUTO and worker_serves(settings)):
        return _via_queue(store, settings, pairs, deadline_s)
    return _here(store, settings, pairs, deadline_s)


def _via_queue(
    store: EventStore, settings: Settings, pairs: list[tuple[Push, DecidePush]], deadline_s: float
) -> Decided:
    from ouroboros_gates.ops.embedded import EmbeddedFleet

    for push, message in pairs:
        record_push(store, push, message)
    relay(store, settings)
    ids = [message.message_id for _push, message in pairs]
    if settings.embedded and wait_decided(store, ids, 0.0):
        with EmbeddedFleet(settings, queues=["decider"], concurrency=1) as fleet:
            late = wait_decided(store, ids, deadline_s, fleet.alive)
        return Decided("a decider worker started for the push", frozenset(late))
    return Decided("the decider worker", frozenset(wait_decided(store, ids, deadline_s)))


def _here(
    store: EventStore, settings: Settings, pairs: list[tuple[Push, DecidePush]], deadline_s: float
) -> Decided:
    """The decider worker's core run here on each push, its events appended as the worker appends them. A push
    not decided by the deadline (or whose decision failed) is queued for the decider worker instead: the push
    goes on, and whichever worker runs next decides it (or dead-letters it, with the reason)."""
    end = time.monotonic() + deadline_s
    late: set[str] = set()
    failed: dict[str, str] = {}
    for push, message in pairs:
        record_push(store, push, message, queued=False)
        if handled(store, message.message_id):
            continue  # the same push decided before
        result = _decide_by(message, settings, store, end)
        if isinstance(result, tuple):
            stream, decisions = result
            store.commit([StreamWrite(stream, decisions)], Metadata.for_message(TASK, message))
            continue
        if result is None:
            late.add(message.message_id)
        else:
            failed[message.message_id] = f"{type(result).__name__}: {result}"
        store.commit([], Metadata(producer=PRODUCER, tenant=message.tenant), [message])
    return Decided("this process", frozenset(late), failed)


def _decide_by(
    message: DecidePush, settings: Settings, store: EventStore, end: float
) -> tuple[str, list[DecisionMade]] | Exception | None:
    """The core's answer by the monotonic time ``end``, or the exception it raised, or None when it is still
    deciding then (its thread is left behind: a daemon, it ends with the process)."""
    from ouroboros_gates.workers.decider.core import decide_push

    wait_s = end - time.monotonic()
    if wait_s <= 0:
        return None
    found: list[tuple[str, list[DecisionMade]] | Exception] = []

    def work() -> None:
        try:
            found.append(
                decide_push(message, settings.model_copy(update={"decider_deadline_s": wait_s}), store)
            )
        except (
            Exception
        ) as exc:  # as a worker's dead letter would: the decider failing does not hold the push
            found.append(exc)

    thread = threading.Thread(target=work, name=f"decide {message.head[:12]}", daemon=True)
    thread.start()
    thread.join(wait_s)
    return found[0] if found else None


def decisions_of(store: EventStore, head: str, message_id: str | None = None) -> list[Decision]:
    """The decisions recorded on ``push/<head>`` (those answering one message, when given)."""
    found = []
    for event in store.read_stream(f"push/{head}"):
        if _is_decision(event, message_id):
            found.append(event.decode_as(DecisionMade).decision)
    return found


def _is_decision(event: StoredEvent, message_id: str | None) -> bool:
    """Whether the event is a decision (answering ``message_id``, when given)."""
    return event.type == DecisionMade.TYPE and (
        message_id is None or event.meta.get("message_id") == message_id
    )


@dataclass(frozen=True)
class RefDecided:
    """One pushed ref as the hook reports it: its decisions, or why it has none (not decided by the deadline,
    the decider failed on it, or it has no candidate; ``handled`` False: the decider refused the message)."""

    message: DecidePush
    decisions: tuple[Decision, ...] = ()
    late: bool = False
    failed: str | None = None
    handled: bool = True


@dataclass(frozen=True)
class PrePush:
    """A push as ``ouro pre-push`` reports it: who decided it, and each ref."""

    by: str
    refs: tuple[RefDecided, ...]

    @property
    def decided(self) -> int:
        """The refs decided in time (with or without a candidate)."""
        return sum(not ref.late and ref.failed is None for ref in self.refs)

    @property
    def blocked(self) -> int:
        """The BLOCK decisions over every ref."""
        return sum(d.action is Action.BLOCK for ref in self.refs for d in ref.decisions)


def pre_push(
    store: LedgerStore,
    settings: Settings,
    repo: Path,
    env: Mapping[str, str],
    stdin: TextIO,
    *,
    deadline_s: float | None = None,
    via: Via = Via.AUTO,
    priors: str = "detected",
) -> PrePush:
    """Decide the refs pushed from the checkout holding ``repo`` (pre-commit's variables in ``env`` when
    pre-commit runs the hook, else git's lines on ``stdin``) within ``deadline_s`` (default the settings'),
    here or through the queue (``via``); the log gets ``PushReceived`` and the ``DecisionMade`` events,
    projected. The decider may read the checkout: when it lies outside the roots, they are widened for this
    push (a remote worker keeps its own)."""
    top = Path(query(repo, "rev-parse", "--show-toplevel")).resolve()
    settings = _reaching(settings, top)
    pushes = read_pushes(top, repo_key(top), env, stdin)
    pairs = [
        (push, push_message(push, settings.tenant).model_copy(update={"priors": priors})) for push in pushes
    ]
    wait_s = deadline_s if deadline_s is not None else settings.decider_deadline_s
    decided = decide_pushes(store, settings, pairs, wait_s, via)
    catch_up(store, PROJECTIONS)
    return PrePush(decided.by, tuple(_ref(store, message, decided) for _push, message in pairs))


def _reaching(settings: Settings, top: Path) -> Settings:
    """The settings, their allowed roots widened to the checkout ``top`` when it lies outside them."""
    if not any(top.is_relative_to(root) for root in settings.allowed_roots):
        return settings.with_roots(top)
    return settings


def _ref(store: EventStore, message: DecidePush, decided: Decided) -> RefDecided:
    if message.message_id in decided.late:
        return RefDecided(message, late=True)
    if message.message_id in decided.failed:
        return RefDecided(message, failed=decided.failed[message.message_id])
    found = tuple(decisions_of(store, message.head, message.message_id))
    return RefDecided(
        message, found, handled=bool(found) or store.is_handled(message.TASK, message.message_id)
    )

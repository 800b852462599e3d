"""Pushes for the decider: the refs of a push (git's pre-push lines, or the variables pre-commit sets), the
push decided in this process or through the decider's queue, and the decisions read back from ``push/<head>``;
``pre_push`` is what ``ouro pre-push`` runs, end to end (the main job decides its example pushes through
``ops.loop``).

Either way the log holds the same events: ``PushReceived`` on ``push/<head>`` (written by ``ouro.pre-push``),
then one ``DecisionMade`` per candidate written as the decider's answer to the push's ``DecidePush`` (so
``is_handled`` knows it, and a worker given the same message later appends nothing). In this process the
decider worker's own core runs (``workers.decider.tasks``); through the queue the message goes out through the
outbox and a worker answers it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TextIO

from ouroboros_gates.events import EventStore, LedgerStore, Metadata, StreamWrite
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import catch_up
from ouroboros_gates.forge.checkout import query, repo_key
from ouroboros_gates.forge.git import git
from ouroboros_gates.schemas import (
    NULL_COMMIT,
    Action,
    DecidePush,
    Decision,
    DecisionMade,
    PushReceived,
    content_id,
)
from ouroboros_gates.schemas.errors import OuroError
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
        if len(parts) != 4 or not all(
            len(p) == 40 and all(c in "0123456789abcdef" for c in p) for p in parts[1::2]
        ):
            raise OuroError(f"stdin:{number}: expected '<local ref> <local sha> <remote ref> <remote sha>'")
        _local_ref, local_sha, remote_ref, remote_sha = parts
        if local_sha != NULL_COMMIT:
            pushes.append(Push(repo, remote_ref, remote_sha, local_sha, path))
    return pushes


def pre_commit_pushes(env: Mapping[str, str], top: Path, repo: str) -> list[Push] | None:
    """The push pre-commit describes in its variables, or None when pre-commit did not run this command.

    pre-commit reads git's stdin itself and passes on the first ref that pushes commits: the commits as
    ``PRE_COMMIT_FROM_REF``/``PRE_COMMIT_TO_REF`` (before 2.2, ``PRE_COMMIT_ORIGIN``/``PRE_COMMIT_SOURCE``),
    and only ``PRE_COMMIT_LOCAL_BRANCH`` when every commit of the branch is new to the remote (its root
    included). Names of refs are accepted as well as commits (``pre-commit run --from-ref origin/main
    --to-ref HEAD``). Nothing named (a run with no refs) is an empty list."""
    head_given = env.get("PRE_COMMIT_TO_REF") or env.get("PRE_COMMIT_SOURCE")
    local = env.get("PRE_COMMIT_LOCAL_BRANCH")
    if env.get("PRE_COMMIT") != "1" and not head_given and not local:
        return None
    ref = env.get("PRE_COMMIT_REMOTE_BRANCH") or local or "HEAD"
    if head_given:
        return [
            Push(
                repo, ref, _pre_commit_base(env, top), _commit(top, head_given, "PRE_COMMIT_TO_REF"), str(top)
            )
        ]
    if local:
        return [Push(repo, ref, NULL_COMMIT, _commit(top, local, "PRE_COMMIT_LOCAL_BRANCH"), str(top))]
    return []


def _pre_commit_base(env: Mapping[str, str], top: Path) -> str:
    """The remote's commit pre-commit names (the null commit when it names none)."""
    base_given = env.get("PRE_COMMIT_FROM_REF") or env.get("PRE_COMMIT_ORIGIN")
    return _commit(top, base_given, "PRE_COMMIT_FROM_REF") if base_given else NULL_COMMIT


def _commit(top: Path, name: str, variable: str) -> str:
    """The commit ``name`` (a sha or a ref) names in the checkout; an error naming the variable otherwise."""
    found = git(
        "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", cwd=top, check=False, user_config=True
    )
    sha = found.stdout.decode("utf-8", "replace").strip()
    if found.returncode != 0 or len(sha) != 40:
        raise OuroError(f"{variable}={name!r}: not a commit of {top}")
    return sha


def read_pushes(top: Path, repo: str, env: Mapping[str, str], stdin: TextIO) -> list[Push]:
    """The refs being pushed from the checkout ``top``: pre-commit's variables when pre-commit runs this, else
    git's stdin lines. A new ref is decided from the parent of its first commit no remote has; a ref that
    pushes nothing new is left out."""
    given = pre_commit_pushes(env, top, repo)
    if given is None:
        if stdin.isatty():
            raise OuroError(
                "stdin: no refs; git gives a pre-push hook '<local ref> <local sha> <remote ref> "
                "<remote sha>' lines there (install the hook with `ouro hooks install`)"
            )
        given = parse_pre_push(stdin.read().splitlines(), repo, str(top))
    pushes = [
        push if push.base != NULL_COMMIT else replace(push, base=new_ref_base(top, push.head))
        for push in given
    ]
    return [push for push in pushes if push.base != push.head]


def new_ref_base(repo: Path, head: str) -> str:
    """For a new ref, the parent of the oldest commit no remote has (zeros when every commit is new)."""
    unpushed = git(
        "rev-list", "--reverse", head, "--not", "--remotes", cwd=repo, check=False, user_config=True
    )
    listed = unpushed.stdout.decode("utf-8", "replace").split()
    if not listed:
        return head
    found = git("rev-parse", "--verify", "--quiet", f"{listed[0]}^", cwd=repo, check=False, user_config=True)
    return found.stdout.decode("utf-8", "replace").strip() or NULL_COMMIT


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
    left = [m for m in message_ids if not handled(store, m)]
    while left and time.monotonic() < end:
        if callable(alive) and not alive():
            break
        time.sleep(0.1)
        left = [m for m in left if not handled(store, m)]
    return left


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
        if event.type == DecisionMade.TYPE and (
            message_id is None or event.meta.get("message_id") == message_id
        ):
            found.append(event.decode_as(DecisionMade).decision)
    return found


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
    if not any(top.is_relative_to(root) for root in settings.allowed_roots):
        settings = settings.with_roots(top)
    pushes = read_pushes(top, repo_key(top), env, stdin)
    pairs = [
        (push, push_message(push, settings.tenant).model_copy(update={"priors": priors})) for push in pushes
    ]
    wait_s = deadline_s if deadline_s is not None else settings.decider_deadline_s
    decided = decide_pushes(store, settings, pairs, wait_s, via)
    catch_up(store, PROJECTIONS)
    return PrePush(decided.by, tuple(_ref(store, message, decided) for _push, message in pairs))


def _ref(store: EventStore, message: DecidePush, decided: Decided) -> RefDecided:
    if message.message_id in decided.late:
        return RefDecided(message, late=True)
    if message.message_id in decided.failed:
        return RefDecided(message, failed=decided.failed[message.message_id])
    found = tuple(decisions_of(store, message.head, message.message_id))
    return RefDecided(
        message, found, handled=bool(found) or store.is_handled(message.TASK, message.message_id)
    )

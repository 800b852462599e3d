"""How every step of the main job goes through the queue: publish its messages (or let the outbox do it) to
an embedded worker, wait for them, and say what came of them.

    done = through_queue(store, settings, ["prechecker"], shared, publish=messages)
    if not done.ok:
        ...  # done.left: message id -> why it was not handled

A message handled before the step ran is not sent again (a second run of the loop appends nothing); a wait
stops at once, raising ``MessageFailed`` with the reason, when a message is dead-lettered for a reason to
fix or the worker has nothing left to run (``ops.embedded.wait_handled``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from celery import Celery

from ouroboros_gates.events import EventStore, LedgerStore
from ouroboros_gates.ops.embedded import WAIT_S, SharedFleet, fleet_for, wait_handled
from ouroboros_gates.schemas import Message
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import declare_queues, relay_outbox
from ouroboros_gates.workers import publish as publish_message

__all__ = ["Handled", "sharing", "tasks", "through_queue"]


@dataclass(frozen=True)
class Handled:
    """What a step's messages came to: those handled now, those handled before the step ran (not sent again),
    and those not handled in time, each with why (``ok`` when there is none)."""

    handled: tuple[str, ...] = ()
    before: tuple[str, ...] = ()
    left: Mapping[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Every message was handled (now or before)."""
        return not self.left

    def __add__(self, other: Handled) -> Handled:
        return Handled(self.handled + other.handled, self.before + other.before, {**self.left, **other.left})


def tasks(messages: Iterable[Message]) -> dict[str, str]:
    """Message id -> the task that handles it: what a step waits for."""
    return {m.message_id: m.TASK for m in messages}


def through_queue(
    store: LedgerStore,
    settings: Settings,
    queues: Sequence[str] | None,
    shared: SharedFleet | None = None,
    *,
    publish: Sequence[Message] = (),
    waiting: Mapping[str, str] | None = None,
    relay: bool = False,
    timeout_s: float = WAIT_S,
    on_progress: Callable[[int], object] | None = None,
) -> Handled:
    """Have a worker on ``queues`` (the shared one when given) handle the messages of ``publish``, published
    here, and of ``waiting`` (message id -> task: on their way through the outbox, published here first when
    ``relay``); wait up to ``timeout_s`` for those not handled before."""
    before, pending = _handled_before(store, {**tasks(publish), **(waiting or {})})
    if not pending:
        return Handled(before=before)
    with fleet_for(shared, settings, queues) as fleet:
        _send(store, settings, fleet.broker(), [m for m in publish if m.message_id in pending], relay)
        left = wait_handled(store, pending, fleet, timeout_s, on_progress)
    return _outcome(pending, before, left, timeout_s)


def _outcome(
    pending: Mapping[str, str], before: tuple[str, ...], left: list[str], timeout_s: float
) -> Handled:
    """The messages handled now (pending and not left), those handled before, and those left, with why."""
    why = f"not handled within {timeout_s:g} s"
    return Handled(tuple(m for m in pending if m not in left), before, dict.fromkeys(left, why))


def _handled_before(store: EventStore, wanted: Mapping[str, str]) -> tuple[tuple[str, ...], dict[str, str]]:
    """The messages handled before (never sent again), and the rest (message id -> task)."""
    before = tuple(m for m, task in wanted.items() if store.is_handled(task, m))
    return before, {m: task for m, task in wanted.items() if m not in before}


def _send(
    store: EventStore, settings: Settings, sender: Celery, messages: Sequence[Message], relay: bool
) -> None:
    """Publish the messages on the settings' broker (whatever this process's environment says), and the outbox
    when ``relay``."""
    if messages and not settings.embedded:  # the embedded fleet declared them when it started
        declare_queues(sender)  # a message published before the worker declares its queue waits for it
    for message in messages:
        publish_message(message, via=sender)
    if relay:
        relay_outbox(store, limit=1000, publisher=sender)


@contextmanager
def sharing(
    shared: SharedFleet | None, settings: Settings, queues: Sequence[str] | None
) -> Iterator[SharedFleet]:
    """The shared worker when there is one; else one of its own on ``queues`` for several waits in a row
    (started when first needed), stopped after them."""
    if shared is not None:
        yield shared
        return
    own = SharedFleet(settings, queues)
    try:
        yield own
    finally:
        own.close()

"""The thin shell around every task: validate at the door, call the core, append, relay the outbox.

A core is ``handler(message, context) -> Outcome``; it never sees Celery. The shell turns a
validation failure into a ``MessageRejected`` event naming the field, retries transient failures with
exponential backoff, and sends a message that keeps failing to the dead-letter queue — never dropping it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from celery import Celery
from celery.exceptions import SoftTimeLimitExceeded
from pydantic import ValidationError

from ouroboros_gates.events import (
    DEAD_LETTER,
    REJECTED,
    EventStore,
    LedgerStore,
    Metadata,
    OutboxEntry,
    StreamWrite,
    open_store,
)
from ouroboros_gates.schemas import Event, Message, MessageDeadLettered, MessageRejected, content_id
from ouroboros_gates.schemas.errors import ConfigurationError, OuroError, PermanentError, TransientError
from ouroboros_gates.schemas.settings import Settings, load_settings
from ouroboros_gates.workers.app import DEAD_LETTER_QUEUE, DEAD_LETTER_STREAM, app, queue_for

__all__ = [
    "Context",
    "Outcome",
    "context",
    "fleet_task",
    "publish",
    "redeliver_lost",
    "relay_committed",
    "relay_outbox",
    "send_through_outbox",
]

log = logging.getLogger(__name__)
_RECORD_ATTEMPTS = 4  # a dead letter is parked first, then recorded: the record is retried in place
_OPEN_RETRY_S = 2.0  # a message that met an event log it could not open is retried this much later
M = TypeVar("M", bound=Message)
_Kept = TypeVar("_Kept")


@dataclass(frozen=True)
class Outcome:
    """What a core decided: events per stream, and follow-up messages for the outbox."""

    writes: Sequence[StreamWrite] = ()
    follow_ups: Sequence[Message] = field(default=())

    @classmethod
    def single(cls, stream: str, *events: Event, follow_ups: Sequence[Message] = ()) -> Outcome:
        """Events for one stream."""
        return cls(writes=(StreamWrite(stream, events),), follow_ups=follow_ups)


@dataclass
class Context:
    """What a core may use: the settings, the event store, who is running it, and what its process keeps
    between messages."""

    settings: Settings
    store: LedgerStore
    worker: str
    kept: dict[Callable[[], Any], Any] = field(default_factory=dict)
    """The process's caches by the factory that made each (``keep``)."""

    def keep(self, kind: Callable[[], _Kept]) -> _Kept:
        """This process's one ``kind()``, made on first use: a cache a core keeps between messages (the miner
        worker's catalogue, the verdicts it has read), held by the context a worker process makes after the
        fork, never by a module."""
        if kind not in self.kept:
            self.kept[kind] = kind()
        found: _Kept = self.kept[kind]
        return found


_contexts: dict[int, Context] = {}
_context_lock = threading.Lock()


def context() -> Context:
    """This process's context, created on first use (after the prefork pool has forked)."""
    with _context_lock:
        pid = os.getpid()
        if pid not in _contexts:
            settings = load_settings(os.environ.get("OURO_ROLE"))
            store = open_store(settings.event_log_url)
            _contexts[pid] = Context(settings, store, f"{socket.gethostname()}/{pid}")
        return _contexts[pid]


def reset_context() -> None:
    """Forget the process's context (in tests that change the environment)."""
    with _context_lock:
        _contexts.clear()


def publish(message: Message, queue: str | None = None, via: Celery | None = None) -> None:
    """Send a message to its task's queue; its message id is the Celery task id."""
    (via or app).send_task(
        message.TASK,
        args=[message.to_json_dict()],
        task_id=message.message_id,
        queue=queue or queue_for(message.TASK),
    )


def relay_outbox(store: EventStore, limit: int = 100, publisher: Celery | None = None) -> int:
    """Publish pending outbox entries (on ``publisher``, by default the process's app); a failed publish
    stays pending with its error."""
    return _publish(store, store.pending_outbox(limit), publisher or app)


def redeliver_lost(ctx: Context, limit: int = 100, publisher: Celery | None = None) -> int:
    """Publish again the follow-ups published ``outbox_redeliver_s`` ago that no worker has recorded since:
    a broker can lose a message it took (Redis between a pop and its unacked copy); consumers are
    idempotent, so one published twice is handled once."""
    entries = ctx.store.unrecorded_outbox(ctx.settings.outbox_redeliver_s, limit)
    for entry in entries:
        log.warning("follow-up %s %s was never recorded; publishing it again", entry.task, entry.message_id)
    return _publish(ctx.store, entries, publisher or app)


def _publish(store: EventStore, entries: Sequence[OutboxEntry], sender: Celery) -> int:
    sent: list[int] = []
    for entry in entries:
        try:
            sender.send_task(
                entry.task, args=[entry.payload], task_id=entry.message_id, queue=queue_for(entry.task)
            )
        except Exception as exc:  # the broker's own error types vary by transport
            store.mark_published(entry.id, error=f"{type(exc).__name__}: {exc}"[:500])
            continue
        sent.append(entry.id)
    store.mark_all_published(sent)
    return len(sent)


SWEEP_S = 5.0
"""How often a worker also publishes whatever else is pending in the outbox after its own follow-ups
(an entry whose publish failed, or one a killed worker committed and never sent); beat sweeps every
30 s as well."""

_swept: dict[int, float] = {}


def relay_committed(ctx: Context, committed: Sequence[OutboxEntry]) -> int:
    """Publish the follow-ups a commit just queued (no read of the outbox: the commit returned them), and
    every ``SWEEP_S`` what else is pending."""
    sent = _publish(ctx.store, committed, app)
    pid, now = os.getpid(), time.monotonic()
    if sent == len(committed) and now - _swept.get(pid, now - SWEEP_S) < SWEEP_S:
        return sent
    _swept[pid] = now
    return sent + relay_outbox(ctx.store)


def send_through_outbox(
    store: EventStore, messages: Sequence[Message], producer: str, publisher: Celery | None = None
) -> tuple[tuple[OutboxEntry, ...], int]:
    """Send messages from outside the fleet (``ouro ingest``) as a worker sends its follow-ups: queued in
    the event log's outbox in one transaction, then published. One the broker refuses stays pending for the
    outbox sweep (beat, ``fleet.relay_outbox``); one the broker loses after taking it is published again by
    ``redeliver_lost`` until its consumer records it. A message already in the outbox (by its message id)
    is not queued again. Returns the entries queued now, and how many of them were published."""
    if not messages:
        return (), 0
    queued = store.commit([], Metadata(producer=producer, tenant=messages[0].tenant), messages).outbox
    return queued, _publish(store, queued, publisher or app)


def fleet_task(
    message_type: type[M], *, pure: bool = False
) -> Callable[[Callable[[M, Context], Outcome]], Any]:
    """Register ``handler`` as the Celery task for ``message_type`` (named by its ``TASK``).

    ``pure``: the core has no effect but its ``Outcome`` (and the event log's own idempotent appends), so a
    message handled already is found by the append itself, whose handled check runs in its transaction
    under the write lock; the check before the core, a round trip every message pays, is left out, and a
    redelivered message's core runs again to append nothing. A core with effects of its own (a model
    call, a launch) keeps the check first, so a redelivery does not repeat them."""

    def decorate(handler: Callable[[M, Context], Outcome]) -> Any:
        @app.task(name=message_type.TASK, bind=True, max_retries=None)
        def task(self: Any, payload: Any) -> str:
            return run_message(self, message_type, handler, payload, pure=pure)

        task.message_type = message_type
        task.handler = handler
        task.pure = pure
        return task

    return decorate


def run_message(
    task: Any,
    message_type: type[M],
    handler: Callable[[M, Context], Outcome],
    payload: Any,
    pure: bool = False,
) -> str:
    """Validate, handle, append and relay; returns what happened (for logs and Flower). ``pure``: see
    ``fleet_task``."""
    ctx = _open_context(task, message_type)
    try:
        message = message_type.model_validate(payload)
    except ValidationError as exc:
        return _rejected(ctx, task, message_type, payload, exc)
    producer = message_type.TASK
    try:
        # Inside the retry: a failed check must retry the message, not fail (and so ack) it.
        if not pure and ctx.store.is_handled(producer, message.message_id):
            return "duplicate"
        outcome = handler(message, ctx)
        result = ctx.store.commit(outcome.writes, Metadata.for_message(producer, message), outcome.follow_ups)
    except Exception as exc:
        return _failed(ctx, task, message, exc, pure)
    if result.outbox:
        relay_committed(ctx, result.outbox)
    return "duplicate" if result.duplicate else "appended"


def _open_context(task: Any, message_type: type[Message]) -> Context:
    """The worker's context; the message is retried while the event log cannot be opened."""
    try:
        return context()
    except Exception as exc:  # the event log cannot be opened yet (locked by a migration, unreachable)
        log.warning(
            "%s: the event log cannot be opened (%s: %s); retrying the message",
            message_type.TASK,
            type(exc).__name__,
            exc,
        )
        raise task.retry(exc=exc, countdown=_OPEN_RETRY_S) from exc


def _rejected(
    ctx: Context, task: Any, message_type: type[Message], payload: Any, exc: ValidationError
) -> str:
    """Record an invalid payload's rejection; retried when the log cannot take it (the rejection must be
    recorded, not dropped with the message)."""
    try:
        reject(ctx, message_type.TASK, payload, exc)
    except TransientError as lost:
        raise task.retry(exc=lost, countdown=ctx.settings.retry_backoff_s) from lost
    return "rejected"


def _failed(ctx: Context, task: Any, message: Message, exc: Exception, pure: bool) -> str:
    """A core or its append failed: a duplicate when a pure core's message was handled already; else
    dead-lettered at once when permanent (past the time limit too), retried when not."""
    if pure and _handled_already(ctx, message.TASK, message):
        return "duplicate"
    if isinstance(exc, (PermanentError, ConfigurationError, SoftTimeLimitExceeded)):
        return _dead(ctx, task, message, _as_permanent(ctx, exc), permanent=True)
    return _retried(ctx, task, message, exc)


def _as_permanent(ctx: Context, exc: BaseException) -> BaseException:
    """A core past the time limit is not retried either (it would hold a worker that long again, each
    time): it fails as a permanent error that names the limit."""
    if isinstance(exc, SoftTimeLimitExceeded):
        limit = f"{ctx.settings.time_limit_s or 0:g} s (OURO_TASK_TIME_LIMIT_S)"
        return PermanentError(f"ran past the time limit of {limit}")
    return exc


def _retried(ctx: Context, task: Any, message: Message, exc: Exception) -> str:
    """Retry a failed message with backoff, or dead-letter it once its retries are spent."""
    retries = int(task.request.retries or 0)
    if retries >= ctx.settings.max_retries:
        return _dead(ctx, task, message, exc, permanent=False)
    delay = min(ctx.settings.retry_backoff_s * 2**retries, ctx.settings.retry_backoff_max_s)
    log.warning(
        "%s %s failed (%s), retry %d in %.1fs", message.TASK, message.message_id, exc, retries + 1, delay
    )
    raise task.retry(exc=exc, countdown=delay) from exc


def _dead(ctx: Context, task: Any, message: Message, exc: BaseException, permanent: bool) -> str:
    """Dead-letter the message; retried when neither the broker nor the log took the dead letter."""
    try:
        dead_letter(ctx, task, message, exc, permanent=permanent)
    except TransientError as lost:
        raise task.retry(exc=lost, countdown=ctx.settings.retry_backoff_s) from lost
    return "dead-lettered"


def _handled_already(ctx: Context, producer: str, message: Message) -> bool:
    """A pure core failed: whether its message was handled already (a redelivery of a message whose run, say,
    is gone since is a duplicate, not a failure to dead-letter). Unknown when the log cannot say."""
    try:
        return ctx.store.is_handled(producer, message.message_id)
    except Exception:  # the log is what failed: the message is retried or dead-lettered as before
        return False


def reject(ctx: Context, task_name: str, payload: Any, exc: ValidationError) -> None:
    """Append one ``MessageRejected`` naming every invalid field (idempotent on the payload)."""
    given = payload.get("message_id") if isinstance(payload, dict) else None
    message_id = given if isinstance(given, str) and 8 <= len(given) <= 128 else None
    event = MessageRejected.from_validation_error(task_name, message_id, exc)
    key = message_id or content_id("rejected", task_name, repr(payload)[:10_000])
    meta = Metadata(producer=task_name + REJECTED, message_id=key, tenant=ctx.settings.tenant)
    ctx.store.commit([StreamWrite("fleet/rejected", [event])], meta)
    fields = "; ".join(f"{e.field}: {e.message}" for e in event.errors)
    log.error("%s rejected message %s: %s", task_name, message_id, fields)


def dead_letter(
    ctx: Context, task: Any, message: Message, exc: BaseException, permanent: bool = False
) -> None:
    """Park the message on the dead-letter queue first (so it survives a dead database), then record it; a
    park the broker refuses still records it (the record is what ``ouro status`` and a waiting loop read), and
    one neither takes fails the task, which is retried."""
    attempts = int(task.request.retries or 0) + 1
    error = f"{type(exc).__name__}: {exc}"[:2000]
    try:
        app.send_task(
            DEAD_LETTER,
            args=[
                {
                    "task": message.TASK,
                    "message": message.to_json_dict(),
                    "attempts": attempts,
                    "error": error,
                }
            ],
            queue=DEAD_LETTER_QUEUE,
        )
    except Exception as refused:  # the broker's own error types vary by transport
        log.error(
            "dead letter for %s not parked (%s: %s); recording it",
            message.message_id,
            type(refused).__name__,
            refused,
        )
        parked = False
    else:
        parked = True
    event = MessageDeadLettered(
        task=message.TASK,
        message_id=message.message_id,
        attempts=attempts,
        error_type=type(exc).__name__,
        error=error,
        message=message.to_json_dict(),  # what a retry from the ops page sends again
        permanent=permanent,
    )
    recorded = _record_dead_letter(ctx, message, event)
    if not (parked or recorded):
        raise TransientError(f"dead letter for {message.message_id} neither parked nor recorded")
    log.error(
        "%s %s dead-lettered after %d attempt(s): %s", message.TASK, message.message_id, attempts, error
    )


def _record_dead_letter(ctx: Context, message: Message, event: MessageDeadLettered) -> bool:
    """Append the dead letter, retried in place: a dropped session fails once, the next commit takes a new
    one."""
    meta = Metadata(producer=DEAD_LETTER, message_id=message.message_id, tenant=message.tenant)
    for attempt in range(_RECORD_ATTEMPTS):
        try:
            ctx.store.commit([StreamWrite(DEAD_LETTER_STREAM, [event])], meta)
            return True
        except TransientError:
            if attempt < _RECORD_ATTEMPTS - 1:
                time.sleep(0.2 * 2**attempt)
        except OuroError:
            break
    log.exception("dead letter for %s not recorded", message.message_id)
    return False

"""The embedded fleet: real ``celery worker`` processes on the server-less broker, started and stopped
by the CLI, so the same worker code, acknowledgements and retries run as in production.

The worker dies with the process that started it, even one SIGKILLed (``PR_SET_PDEATHSIG`` on Linux: the
kernel sends it SIGTERM, Celery's warm shutdown). It is supervised: one that dies (SIGKILL, out of memory) is
started again, and the messages it held come back to the new one once their heartbeat has lapsed for the
visibility timeout (``workers/broker.py``). A wait for messages stops at once when one of them is
dead-lettered for a reason the user must fix (a path outside the roots, a missing setting), with that reason;
and when the broker has nothing left to hand out while messages are still unsettled (their cause failed, or
they were lost), instead of waiting out its timeout.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager, ExitStack, nullcontext
from pathlib import Path
from types import TracebackType

from celery import Celery
from sqlalchemy import select

from ouroboros_gates.events import EventStore, LedgerStore
from ouroboros_gates.events import tables as t
from ouroboros_gates.ops.launch import WorkerOptions, worker_argv
from ouroboros_gates.schemas.errors import PermanentError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import QUEUES, build_app, declare_queues
from ouroboros_gates.workers.app import DEAD_LETTER_STREAM

__all__ = [
    "WAIT_S",
    "EmbeddedFleet",
    "MessageFailed",
    "SharedFleet",
    "die_with_parent",
    "fleet_for",
    "settled",
    "wait_handled",
]

log = logging.getLogger(__name__)
RESTARTS = 5  # a worker that keeps dying is a fault to report, not to hide
IDLE_CHECK_S = 2.0  # how often a wait asks the broker whether anything is left to hand out
WAIT_S = 300.0
"""How long a wait for messages lasts unless told otherwise."""


class MessageFailed(PermanentError):
    """A message waited for will not be handled: dead-lettered for a reason to fix, or nothing left to run
    it."""


PR_SET_PDEATHSIG = 1


def die_with_parent(signum: int = signal.SIGTERM) -> Callable[[], None] | None:
    """What a child runs between fork and exec so that it gets ``signum`` when this process dies, however it
    dies (Linux's ``PR_SET_PDEATHSIG``, kept across ``exec``); None where there is no such call.

    The signal follows the thread that started the child: a child started from a thread must be started from
    one that lives as long as the child should (``EmbeddedFleet.watch``'s does)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved here: nothing is loaded after the fork
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def guard() -> None:
        if prctl(ctypes.c_int(PR_SET_PDEATHSIG), ctypes.c_ulong(int(signum))) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != parent:  # the parent died before the guard was set: nobody would signal it
            os._exit(1)

    return guard


class EmbeddedFleet:
    """One ``celery worker`` subprocess consuming every queue, supervised; a context manager."""

    def __init__(self, settings: Settings, concurrency: int = 2, queues: Iterable[str] | None = None) -> None:
        self.settings = settings
        self.concurrency = concurrency
        self.queues = list(queues or dict.fromkeys(QUEUES.values()))
        self.log_path: Path = settings.state_dir / "worker.log"
        self.out_path: Path = settings.state_dir / "worker.out"
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self._broker: Celery | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def command(self) -> list[str]:
        """The worker's argument list (never a shell string): its log in the state directory, rotated."""
        options = WorkerOptions(
            queues=",".join(self.queues),
            hostname=f"embedded-{os.getpid()}@%h",
            concurrency=self.concurrency,
            logfile=str(self.log_path),
            loglevel=self.settings.log_level,
            extra=("--without-gossip", "--without-mingle", "--without-heartbeat"),
        )
        return worker_argv(options)

    def environment(self) -> dict[str, str]:
        """The worker's environment: this process's, with the settings the CLI was given."""
        env = dict(os.environ)
        env["OURO_STATE"] = str(self.settings.state_dir)
        if self.settings.database_url:
            env["OURO_DATABASE_URL"] = self.settings.database_url
        env["OURO_BROKER_URL"] = self.settings.celery_broker_url
        names = (
            "forge",
            "fixers",
            "fixer_command",
            "fixer_daily_cap_usd",
            "fixer_session_usd",
            "merge_gate",
            "roots",
        )
        for name in names:
            value = getattr(self.settings, name)
            if value is not None:  # the worker sees the forge, fixer and roots settings the CLI was given
                env[f"OURO_{name.upper()}"] = str(int(value) if isinstance(value, bool) else value)
        return env

    def _start(self) -> None:
        # Before logging starts (the banner, a failed import) the worker writes to worker.out; then to
        # worker.log.
        with self.out_path.open("ab") as out:
            command, env = self.command(), self.environment()
            guard = die_with_parent()
            self.process = subprocess.Popen(
                command,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                preexec_fn=guard,  # noqa: PLW1509 (it takes no lock: prctl, getppid, _exit)
            )

    def __enter__(self) -> EmbeddedFleet:
        if (
            self.settings.embedded
        ):  # its tables and queues exist before the worker and any publisher make them
            declare_queues(self.broker())
        self._start()
        return self

    def alive(self) -> bool:
        """Whether the worker runs; one that died is started again (at most ``RESTARTS`` times), and the
        messages it held come back to the new one after the visibility timeout."""
        with self._lock:
            if self.process is None or self._stopping.is_set():
                return False
            if self.process.poll() is None:
                return True
            if self.restarts >= RESTARTS:
                return False
            self.restarts += 1
            log.warning(
                "the embedded worker exited with %s; starting it again (%d of %d)",
                self.process.returncode,
                self.restarts,
                RESTARTS,
            )
            self._start()
            return True

    def watch(self, every_s: float = 5.0) -> None:
        """Look after the worker from a thread until the fleet stops (``ouro serve``, where nothing waits on
        it)."""

        def look() -> None:
            while not self._stopping.wait(every_s) and self.alive():
                pass

        threading.Thread(target=look, name="embedded-worker-watch", daemon=True).start()

    def broker(self) -> Celery:
        """A publisher on the worker's broker (the settings', whatever this process's environment says)."""
        if self._broker is None:
            self._broker = build_app(self.settings, include=False)
        return self._broker

    def where(self) -> str:
        """Where to read what the worker said."""
        return f"{self.log_path} and {self.out_path}"

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stopping.set()
        if self.process is None:
            return
        # Warm shutdown: the tasks in hand finish within OURO_SHUTDOWN_S, then the worker requeues what still
        # runs (workers/app.py); past that and a margin it is killed, and its messages come back all the same.
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=self.settings.shutdown_s + 15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class SharedFleet:
    """One embedded worker on every queue for a sequence of steps (the main job's), started when a step
    first needs one and stopped by ``close``: starting a worker takes seconds, and a worker per step was most
    of the main job's first run. Its settings must hold what every step's worker needs (the forge too)."""

    def __init__(self, settings: Settings, queues: Iterable[str] | None = None) -> None:
        self.settings = settings
        self.queues = list(queues) if queues is not None else None
        self._fleet: EmbeddedFleet | None = None
        self._running = ExitStack()

    def started(self) -> EmbeddedFleet:
        """The worker, started now if it was not."""
        if self._fleet is None:
            self._fleet = self._running.enter_context(EmbeddedFleet(self.settings, queues=self.queues))
        return self._fleet

    def close(self) -> None:
        """Stop the worker (a warm shutdown) if it was started."""
        self._running.close()
        self._fleet = None


def fleet_for(
    shared: SharedFleet | None, settings: Settings, queues: Iterable[str] | None = None, concurrency: int = 2
) -> AbstractContextManager[EmbeddedFleet]:
    """The shared worker when there is one (left running), else a worker of its own on ``queues``."""
    if shared is not None:
        return nullcontext(shared.started())
    return EmbeddedFleet(settings, concurrency, queues)


def settled(store: EventStore, producer: str, message_id: str) -> bool:
    """Whether ``producer`` handled the message, rejected it, or the fleet dead-lettered it."""
    return store.is_settled(producer, message_id)


def dead_letters(store: LedgerStore, after: int = 0) -> list[tuple[int, dict[str, object]]]:
    """The dead letters recorded after stream version ``after``: (version, payload), oldest first."""
    events = t.events.c
    query = (
        select(events.version, events.payload)
        .where(events.stream == DEAD_LETTER_STREAM, events.version > after)
        .order_by(events.version)
    )
    with store.reading() as conn:
        return [(int(version), dict(payload)) for version, payload in conn.execute(query)]


class _Watch:
    """The dead letters of the messages a wait is for, and of the messages they follow from."""

    def __init__(self, store: LedgerStore, causes: Mapping[str, str]) -> None:
        self.store = store
        self.causes = causes
        self.known: dict[str, dict[str, object]] = {}
        self.version = 0
        self.started = 0
        self.read()
        self.started = self.version  # recorded before the wait: the reason why, never a failure now

    def read(self) -> list[dict[str, object]]:
        """Dead letters recorded since the last read."""
        fresh = dead_letters(self.store, self.version)
        for version, payload in fresh:
            self.version = version
            self.known[str(payload.get("message_id"))] = payload
        return [payload for _version, payload in fresh]

    def failed_now(self, waiting: Iterable[str]) -> str | None:
        """The reason a message waited for (or its cause) was just dead-lettered for good, if one was."""
        ids = {*waiting, *(self.causes.get(m) for m in waiting)} - {None}
        for payload in self.read():
            if payload.get("permanent") and payload.get("message_id") in ids:
                return f"{payload.get('task')} {payload.get('message_id')} failed: {payload.get('error')}"
        return None

    def why(self, message_id: str) -> str:
        """What is known of why a message was not handled: its own dead letter or its cause's."""
        for key in (message_id, self.causes.get(message_id)):
            payload = self.known.get(key or "")
            if payload is not None:
                return f"{payload.get('task')} {key} was dead-lettered: {payload.get('error')}"
        return "no worker took it"


def wait_handled(
    store: LedgerStore,
    pending: dict[str, str],
    fleet: EmbeddedFleet | None = None,
    timeout_s: float = WAIT_S,
    on_progress: Callable[[int], object] | None = None,
    causes: Mapping[str, str] | None = None,
) -> list[str]:
    """Wait until every (message id -> producer) is handled, rejected or dead-lettered; a follow-up published
    by a worker (``causes``: follow-up id -> the id of the message it follows from) may be waited for before
    it exists. Returns the ids still pending at the timeout (empty on success).

    Raises ``MessageFailed`` at once when a message waited for, or its cause, is dead-lettered for a reason to
    fix (with the reason), and when the fleet's queues hold nothing and nothing is in flight while messages
    are still unsettled (twice in a row, ``IDLE_CHECK_S`` apart)."""
    deadline = time.monotonic() + timeout_s
    left = dict(pending)
    watch = _Watch(store, causes or {})
    worker = _Worker(store, fleet)
    while left and time.monotonic() < deadline:
        _settle(store, left, on_progress)
        reason = watch.failed_now(pending)  # settled by a dead letter is settled, and failed
        if reason:
            raise MessageFailed(reason)
        if not left:
            break
        worker.check(left, watch)
        time.sleep(0.1)
    return sorted(left)


def _settle(store: EventStore, left: dict[str, str], on_progress: Callable[[int], object] | None) -> None:
    """Drop from ``left`` the messages settled now, and tell ``on_progress`` how many."""
    done = [message_id for message_id, producer in left.items() if settled(store, producer, message_id)]
    for message_id in done:
        del left[message_id]
    if done and on_progress is not None:
        on_progress(len(done))


class _Worker:
    """Whether the fleet's worker can still handle what a wait is for: alive, and not idle while messages are
    unsettled (twice in a row, ``IDLE_CHECK_S`` apart)."""

    def __init__(self, store: LedgerStore, fleet: EmbeddedFleet | None) -> None:
        self.store = store
        self.fleet = fleet
        self.idle_at = time.monotonic() + IDLE_CHECK_S
        self.quiet = 0

    def check(self, left: Mapping[str, str], watch: _Watch) -> None:
        """Raise ``MessageFailed`` when the worker kept exiting, or has nothing left to run for ``left``."""
        fleet = self.fleet
        if fleet is None:
            return
        if not fleet.alive():
            raise MessageFailed(f"the embedded worker kept exiting; see {fleet.where()}")
        if time.monotonic() < self.idle_at:
            return
        self.idle_at = time.monotonic() + IDLE_CHECK_S
        self.quiet = self.quiet + 1 if _idle(self.store, fleet) else 0
        if self.quiet >= 2:
            why = "; ".join(f"{m}: {watch.why(m)}" for m in sorted(left))
            raise MessageFailed(f"{len(left)} message(s) will not be handled ({why}); see {fleet.where()}")


def _idle(store: LedgerStore, fleet: EmbeddedFleet) -> bool:
    """Nothing for the fleet's worker to do: its queues empty, nothing in flight, no follow-up to publish."""
    from ouroboros_gates.ops.status import broker_idle

    with store.reading() as conn:
        unpublished = conn.execute(
            select(t.outbox.c.id).where(t.outbox.c.published_at.is_(None)).limit(1)
        ).first()
    return unpublished is None and broker_idle(fleet.queues, fleet.broker())

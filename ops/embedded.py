"""The embedded fleet: real ``celery worker`` processes on the server-less broker, started and stopped
by the CLI, so the same worker code, acknowledgements and retries run as in production."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from contextlib import AbstractContextManager, ExitStack, nullcontext
from pathlib import Path
from types import TracebackType

from ouroboros_gates.events import SqlEventStore
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import QUEUES

__all__ = ["EmbeddedFleet", "SharedFleet", "fleet_for", "settled", "wait_handled"]


class EmbeddedFleet:
    """One ``celery worker`` subprocess consuming every queue; a context manager."""

    def __init__(self, settings: Settings, concurrency: int = 2, queues: Iterable[str] | None = None) -> None:
        self.settings = settings
        self.concurrency = concurrency
        self.queues = list(queues or dict.fromkeys(QUEUES.values()))
        self.log_path: Path = settings.state_dir / "worker.log"
        self.process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        """The worker's argument list (never a shell string)."""
        return [
            sys.executable, "-m", "celery", "-A", "ouroboros_gates.workers.app", "worker",
            "-Q", ",".join(self.queues), "-c", str(self.concurrency),
            "-n", f"embedded-{os.getpid()}@%h", "-l", "WARNING",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip

    def __enter__(self) -> EmbeddedFleet:
        env = dict(os.environ)
        env["OURO_STATE"] = str(self.settings.state_dir)
        if self.settings.database_url:
            env["OURO_DATABASE_URL"] = self.settings.database_url
        env["OURO_BROKER_URL"] = self.settings.celery_broker_url
        names = ("forge", "fixers", "fixer_command", "fixer_daily_cap_usd", "fixer_session_usd", "merge_gate", "roots")
        for name in names:
            value = getattr(self.settings, name)
            if value is not None:  # the worker sees the forge, fixer and roots settings the CLI was given
                env[f"OURO_{name.upper()}"] = str(int(value) if isinstance(value, bool) else value)
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(self.command(), env=env, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        return self

    def alive(self) -> bool:
        """Whether the worker process is still running."""
        return self.process is not None and self.process.poll() is None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)  # warm shutdown: finish the task in hand
        try:
            self.process.wait(timeout=30)
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


def settled(store: SqlEventStore, producer: str, message_id: str) -> bool:
    """Whether ``producer`` handled the message, rejected it, or the fleet dead-lettered it."""
    return store.is_settled(producer, message_id)


def wait_handled(
    store: SqlEventStore,
    pending: dict[str, str],
    fleet: EmbeddedFleet | None = None,
    timeout_s: float = 300.0,
    on_progress: object | None = None,
) -> list[str]:
    """Wait until every (message id -> producer) is handled, rejected or dead-lettered.

    Returns the ids still pending at the timeout (empty on success).
    """
    deadline = time.monotonic() + timeout_s
    left = dict(pending)
    while left and time.monotonic() < deadline:
        for message_id, producer in list(left.items()):
            if settled(store, producer, message_id):
                del left[message_id]
                if callable(on_progress):
                    on_progress(1)
        if left:
            if fleet is not None and not fleet.alive():
                raise RuntimeError(f"the embedded worker exited; see {fleet.log_path}")
            time.sleep(0.1)
    return sorted(left)

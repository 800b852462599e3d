"""Work the gate server does off the request path: warn gates, on one thread, the latest call per session.

A decision hands its warn gates' evaluation here and answers at once. Jobs are kept by session, and a
session's newer job replaces one not yet started (the run it reads holds the older call too), so a long
session never queues more than one job, however fast its calls come. One job runs at a time; after a job
that took t seconds the thread rests t seconds (at most ``REST_MAX_S``) before the next, so warn gates use
at most about half a core. Requests keep their latency: the server sets a short switch interval, so the
request thread waits about a millisecond for the interpreter, not a job's length.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable

__all__ = ["REST_MAX_S", "Later"]

REST_MAX_S = 5.0
"""The longest rest between two jobs."""

log = logging.getLogger("ops.gate")

Job = Callable[[], None]


class Later:
    """One thread running the latest job of each key, one at a time (see the module docstring)."""

    def __init__(self) -> None:
        self._jobs: dict[Hashable, Job] = {}
        self._busy = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    @property
    def pending(self) -> int:
        """Jobs waiting to start."""
        with self._changed:
            return len(self._jobs)

    def submit(self, key: Hashable, job: Job) -> None:
        """Run ``job`` later, in place of ``key``'s job not yet started."""
        with self._changed:
            self._jobs.pop(key, None)
            self._jobs[key] = job  # to the back: sessions take turns
            self._changed.notify_all()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ouro-gate-later", daemon=True)
                self._thread.start()

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every job submitted so far has run; False when ``timeout`` came first."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._jobs and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: bool(self._jobs))
                key = next(iter(self._jobs))
                job = self._jobs.pop(key)
                self._busy = True
            started = time.monotonic()
            try:
                job()
            except Exception:  # one failing job never stops the thread: it is logged
                log.exception("deferred work failed")
            took = time.monotonic() - started
            with self._changed:
                self._busy = False
                self._changed.notify_all()
            time.sleep(min(took, REST_MAX_S))

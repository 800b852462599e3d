"""Work the gate server does off the request path: warn gates, in a forked child, the latest call per session.

A decision hands its warn gates' evaluation here and answers at once. A job is two halves: ``compute``
runs in a child forked for it (it sees the server's state as it was at the fork, shares no interpreter
with the requests, and whatever it allocates, a whole session's events for a gate that is not local,
goes away with it), and its picklable result comes back over a pipe to ``apply``, which runs in the
server between two requests. Jobs are kept by session, and a session's newer job replaces one not yet
started (the run it reads holds the older call too), so a long session never queues more than one job,
however fast its calls come. One child runs at a time, at a lower priority (``NICE``) than the hook
processes the agent waits for; after a job that took t seconds the next starts no sooner than 2t later
(``REST_FACTOR``, at most ``REST_MAX_S``), so warn gates use at most about a third of a core. While a child
runs, the server's objects are frozen for its collector, so the pages it shares with the child stay shared.
A child still running after ``CHILD_LIMIT_S`` is killed (its job is dropped, and logged), so one stuck job
never stops the warn gates of every session.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import pickle
import signal
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import partial
from typing import Any

from ouroboros_gates.schemas._child import Child, fork_child

__all__ = ["CHILD_LIMIT_S", "NICE", "REST_FACTOR", "REST_MAX_S", "Later"]

CHILD_LIMIT_S = 120.0
"""The longest a child may run; past it, it is killed."""

REST_FACTOR = 2.0
"""After a job that took t seconds the next starts no sooner than this many times t later."""

REST_MAX_S = 30.0
"""The longest rest between two jobs."""

NICE = 10
"""The children's scheduling niceness: the hook processes the agent waits for come first for a core."""

log = logging.getLogger("ouroboros_gates.ops.gate")

Compute = Callable[[], Any]
Apply = Callable[[Any], None]


@dataclass(frozen=True)
class _Job:
    child: Child
    apply: Apply
    started: float


class Later:
    """Jobs run one at a time in forked children, the latest of each key (see the module docstring)."""

    def __init__(self) -> None:
        self._jobs: dict[Hashable, tuple[Compute, Apply]] = {}
        self._running: _Job | None = None
        self._rest_until = 0.0

    @property
    def pending(self) -> int:
        """Jobs submitted and not finished (waiting, or running in a child)."""
        return len(self._jobs) + (self._running is not None)

    def submit(self, key: Hashable, compute: Compute, apply: Apply) -> None:
        """Run ``compute`` in a child later and ``apply`` its result here, in place of ``key``'s job not
        yet started."""
        self._jobs.pop(key, None)
        self._jobs[key] = (compute, apply)  # to the back: sessions take turns

    def fds(self) -> list[int]:
        """The pipe of the running child, for the server's ``select``."""
        return [self._running.child.pipe] if self._running is not None else []

    def wait_s(self) -> float | None:
        """How long the server may wait before ``start`` has something to start (None: nothing to start)."""
        if self._running is not None or not self._jobs:
            return None
        return max(self._rest_until - time.monotonic(), 0.0)

    def start(self) -> None:
        """Start the next job in a child, when none runs and the rest after the last one is over."""
        if self._running is None and self._jobs and time.monotonic() >= self._rest_until:
            key = next(iter(self._jobs))
            try:
                self._running = _fork(*self._jobs.pop(key))
            except (
                OSError
            ) as exc:  # no process to be had now: the job is dropped, the next call brings another
                log.warning("deferred work not started: %s", exc)
                self._rest_until = time.monotonic() + REST_MAX_S

    def collect(self) -> None:
        """Wait for the running child, and apply its result here (call it when its pipe is readable)."""
        if self._running is not None:
            self._collect(self._running)

    def stop_overdue(self) -> None:
        """Kill the running child when it has run past ``CHILD_LIMIT_S`` (``collect`` then drops its job)."""
        job = self._running
        if job is not None and time.monotonic() - job.started > CHILD_LIMIT_S:
            log.warning("deferred work ran past %.0fs: its child %d is killed", CHILD_LIMIT_S, job.child.pid)
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile: collected as usual
                os.kill(job.child.pid, signal.SIGKILL)
            self._collect(job)

    def drain(self) -> None:
        """Run every job submitted so far to its end, here and now (no rest between them)."""
        while self._jobs or self._running is not None:
            self._rest_until = 0.0
            self.start()
            self.collect()

    def _collect(self, job: _Job) -> None:
        data = job.child.answer()
        self._running = None
        gc.unfreeze()
        took = time.monotonic() - job.started
        self._rest_until = time.monotonic() + min(REST_FACTOR * took, REST_MAX_S)
        try:
            ok, result = pickle.loads(data) if data else (False, "the child died before answering")
        except (pickle.UnpicklingError, EOFError, ValueError) as exc:
            ok, result = False, f"unreadable answer: {exc}"
        if not ok:
            log.warning("deferred work failed: %s", result)
            return
        try:
            job.apply(result)
        except Exception:  # one failing job never stops the server: it is logged
            log.exception("applying deferred work failed")


def _fork(compute: Compute, apply: Apply) -> _Job:
    """Start ``compute`` in a child; its ``(ok, result or error text)`` comes back pickled over a pipe."""
    started = time.monotonic()
    gc.freeze()  # while the child runs, the server's collections leave the shared pages alone (no copies)
    try:
        return _Job(fork_child(partial(_answer, compute), nice=NICE), apply, started)
    except OSError:
        gc.unfreeze()
        raise


def _answer(compute: Compute) -> bytes:
    """In the child: ``(True, result)`` or ``(False, the error)``, pickled."""
    try:
        answer: tuple[bool, Any] = (True, compute())
    except Exception as exc:
        answer = (False, f"{type(exc).__name__}: {exc}"[:500])
    return pickle.dumps(answer)

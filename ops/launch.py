"""The command lines of the fleet's long-running processes (``celery worker``, ``beat``, ``flower``), built in
one place for ``ouro worker``/``beat``/``flower`` and the embedded fleet: always argument lists, never a shell
string.

A worker is named ``<role>@<host>`` unless ``-n`` says otherwise: two workers on one host with Celery's
default name (``celery@<host>``) are one worker to Flower and to the remote-control commands.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ouroboros_gates.workers import QUEUES

__all__ = [
    "APP",
    "WorkerOptions",
    "beat_argv",
    "flower_argv",
    "node_name",
    "queue_names",
    "role_of",
    "worker_argv",
    "worker_env",
]

APP = "ouroboros_gates.workers.app"


def queue_names(queues: str) -> list[str]:
    """The queues ``-Q`` names (every queue of the fleet when empty); an unknown one is kept (Celery declares
    it)."""
    names = [q.strip() for q in queues.split(",") if q.strip()]
    return names or list(dict.fromkeys(QUEUES.values()))


def role_of(queue: str) -> str:
    """The role whose queue this is (the labeler's is ``gpu``); the queue's own name otherwise."""
    return next((role for role, name in QUEUES.items() if name == queue), queue)


def node_name(queues: Sequence[str]) -> str:
    """The default node name: ``<role>@%h`` for one queue, the roles joined by ``+`` for a few, ``all@%h`` for
    every queue (``%h`` is Celery's host name)."""
    if set(queues) >= set(QUEUES.values()):
        return "all@%h"
    return "+".join(role_of(q) for q in queues) + "@%h"


@dataclass(frozen=True)
class WorkerOptions:
    """Celery's own worker options that ``ouro worker`` takes by name; ``extra`` goes on as given."""

    queues: str = ""
    hostname: str | None = None
    pool: str | None = None
    concurrency: int | None = None
    autoscale: str | None = None
    max_tasks_per_child: int | None = None
    logfile: str | None = None
    loglevel: str = "INFO"
    extra: tuple[str, ...] = field(default=())


def worker_argv(options: WorkerOptions) -> list[str]:
    """``celery worker`` with the options given; a worker gets two processes unless ``-c`` or
    ``--autoscale``."""
    names = queue_names(options.queues)
    argv = [sys.executable, "-m", "celery", "-A", APP, "worker", "-Q", ",".join(names)]
    argv += ["-n", options.hostname or node_name(names), "-l", options.loglevel]
    if options.autoscale:
        argv += ["--autoscale", options.autoscale]
    argv += _concurrency(options)
    argv += _given_flags(options)
    return [*argv, *options.extra]


def _concurrency(options: WorkerOptions) -> list[str]:
    """``-c``: as given, else two processes; none when only ``--autoscale`` sizes the pool."""
    if options.concurrency or not options.autoscale:
        return ["-c", str(options.concurrency or 2)]
    return []


def _given_flags(options: WorkerOptions) -> list[str]:
    """The pool, the tasks per child and the log file, each when given."""
    argv: list[str] = []
    for flag, value in (
        ("-P", options.pool),
        ("--max-tasks-per-child", options.max_tasks_per_child),
        ("--logfile", options.logfile),
    ):
        if value is not None:
            argv += [flag, str(value)]
    return argv


def worker_env(queues: Sequence[str], environ: Mapping[str, str]) -> dict[str, str]:
    """A worker's environment: ``environ``, and for a worker on one queue its role (``OURO_ROLE``, unless
    given), so its ``OURO_<ROLE>_<KEY>`` settings apply to it."""
    env = dict(environ)
    if len(queues) == 1:
        env.setdefault("OURO_ROLE", role_of(queues[0]))
    return env


def beat_argv(schedule: str, loglevel: str) -> list[str]:
    """``celery beat`` keeping its schedule state in ``schedule``."""
    return [sys.executable, "-m", "celery", "-A", APP, "beat", "-l", loglevel, "-s", schedule]


def flower_argv(port: int, address: str) -> list[str]:
    """``celery flower``'s arguments (run in-process): the fleet's logging is kept (``--logging=none``:
    tornado adds no handler of its own)."""
    return ["celery", "-A", APP, "flower", f"--port={port}", f"--address={address}", "--logging=none"]

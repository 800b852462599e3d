"""The Celery app: one queue per role, routing by task-name glob, at-least-once delivery.

Task names are ``"<worker>.<verb>"``; the routes below are the only place a task meets its queue.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
from typing import Any

from celery import Celery
from celery.signals import setup_logging, worker_process_init, worker_shutting_down
from kombu import Exchange, Queue  # type: ignore[attr-defined]

from ouroboros_gates.schemas.settings import Settings, load_settings
from ouroboros_gates.workers.broker import Heartbeat, kombu_url
from ouroboros_gates.workers.logs import configure as configure_logging
from ouroboros_gates.workers.triggers import beat_schedule as trigger_schedule

__all__ = [
    "DEAD_LETTER_QUEUE",
    "DEAD_LETTER_STREAM",
    "QUEUES",
    "ROUTES",
    "app",
    "build_app",
    "configure",
    "declare_queues",
    "queue_for",
]

#: role -> queue; the labeler runs on the GPU host's queue.
QUEUES: dict[str, str] = {
    "miner": "miner",
    "prechecker": "prechecker",
    "labeler": "gpu",
    "fixer": "fixer",
    "decider": "decider",
    "merger": "merger",
    "measurer": "measurer",
    "fleet": "fleet",
}
DEAD_LETTER_QUEUE = "dead_letter"
DEAD_LETTER_STREAM = "fleet/dead-letter"
"""Where the fleet records each dead letter (``MessageDeadLettered``), whichever worker parked it."""
ROUTES: dict[str, dict[str, str]] = {f"{role}.*": {"queue": queue} for role, queue in QUEUES.items()}


def queue_for(task_name: str) -> str:
    """The queue a task is routed to."""
    return QUEUES.get(task_name.split(".", 1)[0], "fleet")


def _transport_options(settings: Settings) -> dict[str, Any]:
    # A message a worker holds is heart-beaten (workers/broker.py); one whose worker stopped beating it is
    # delivered again after the visibility timeout, on both brokers.
    common = {
        "visibility_timeout": settings.visibility_timeout_s,
        "polling_interval": settings.polling_interval_s,
    }
    if settings.embedded:
        return {**common, "connect_args": {"timeout": 60}}
    return {
        **common,
        # kombu looks for messages past the visibility timeout every restore interval rather than every tenth.
        "unacked_restore_interval": settings.restore_interval_s,
        "unacked_restore_throttle": 1,
        # The lock one worker holds while it restores: a worker killed holding it (kombu's default expiry is
        # 300 s) would hold every other worker's redelivery back that long. A restore takes milliseconds.
        "unacked_mutex_expire": max(5, round(2 * settings.restore_interval_s)),
    }


def configure(target: Celery, settings: Settings) -> Celery:
    """Apply the settings to a Celery app."""
    target.conf.update(
        broker_url=kombu_url(settings.celery_broker_url),
        broker_connection_retry_on_startup=True,
        broker_transport_options=_transport_options(settings),
        result_backend=None,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        # A task past the limit gets SoftTimeLimitExceeded in its pool child: the shell dead-letters it
        # (no hard limit: a killed child's message would be acknowledged unrecorded).
        task_soft_time_limit=settings.time_limit_s,
        worker_prefetch_multiplier=1,
        # --autoscale on the gpu queue follows its depth and holds while the GPU is yielded; other queues
        # scale as Celery's own autoscaler does.
        worker_autoscaler="ouroboros_gates.workers.labeler.autoscale:GpuAutoscaler",
        task_queues=[
            Queue(name, Exchange(name, type="direct"), routing_key=name)
            for name in [*dict.fromkeys(QUEUES.values()), DEAD_LETTER_QUEUE]
        ],
        task_default_queue="fleet",
        task_routes=ROUTES,
        worker_hijack_root_logger=False,
        # What Flower shows: every task's life as events (sent with its arguments, received, started, retried,
        # succeeded with its result, failed), and the workers' own heartbeats.
        worker_send_task_events=True,
        task_send_sent_event=True,
        # SIGTERM lets running tasks finish for OURO_SHUTDOWN_S (_bounded_shutdown), then a cold shutdown
        # requeues what still runs, at once: a stopping worker never holds a message until it is killed.
        worker_soft_shutdown_timeout=0.0,
        ouro_heartbeat_s=settings.heartbeat_s,
        timezone=settings.timezone,
        enable_utc=True,
        # Celery's default. Flower inspects every worker with eight commands at once, each holding a pooled
        # connection: with fewer it waited for ever (no workers shown, and a SIGTERM it could not act on).
        broker_pool_limit=10,
        # The four cron triggers (workers/triggers.py: cadences and what each was derived from) in the
        # app's timezone, each through ``fleet.trigger`` and its skip-while-running lock.
        beat_schedule={
            "relay-outbox": {"task": "fleet.relay_outbox", "schedule": 30.0},
            **trigger_schedule(),
        },
    )
    return target


def declare_queues(target: Celery) -> None:
    """Declare every queue, exchange and binding, so a message published before any worker starts waits."""
    with target.connection_for_write() as conn:
        channel = conn.default_channel
        for queue in target.conf.task_queues:
            queue(channel).declare()


def build_app(settings: Settings, include: bool = True) -> Celery:
    """A configured app; ``include=False`` gives a publisher that registers no tasks."""
    built = Celery("ouroboros", include=["ouroboros_gates.workers.tasks"] if include else [])
    built.steps["consumer"].add(Heartbeat)
    return configure(built, settings)


@setup_logging.connect
def _logging(loglevel: int | str | None = None, logfile: str | None = None, **_: Any) -> None:
    """A worker's and beat's logging: OURO_LOG_FORMAT lines at the level given (``-l``), to ``--logfile``
    (rotated) or stderr; print() of a task goes to the log too, as Celery's own setup would send it."""
    configure_logging(load_settings(), logfile, loglevel)
    if logfile:
        app.log.redirect_stdouts("WARNING")


@worker_shutting_down.connect
def _bounded_shutdown(how: str = "", **_: Any) -> None:
    """A warm shutdown (SIGTERM) waits for the running tasks only OURO_SHUTDOWN_S: then it turns cold
    (Celery's SIGQUIT handler), which cancels them and puts their messages back on the queue."""
    if how == "Warm":
        timer = threading.Timer(load_settings().shutdown_s, os.kill, (os.getpid(), signal.SIGQUIT))
        timer.daemon = True
        timer.start()


@worker_process_init.connect
def _stacks_on_sigusr2(**_: Any) -> None:
    """A pool child writes every thread's stack to its log on SIGUSR2 (Celery's main process does so on
    SIGUSR1, which a pool child takes as its soft time limit): a task that hangs can be seen where it hangs
    without stopping it."""
    if sys.__stderr__ is not None:
        faulthandler.register(signal.SIGUSR2, file=sys.__stderr__, all_threads=True)


app = build_app(load_settings())

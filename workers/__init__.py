"""The fleet: the Celery app, routing, and one package per worker."""

from __future__ import annotations

from workers.app import DEAD_LETTER_QUEUE, QUEUES, ROUTES, app, build_app, configure, declare_queues, queue_for
from workers.shell import Context, Outcome, context, fleet_task, publish, relay_outbox, reset_context

__all__ = [
    "DEAD_LETTER_QUEUE",
    "QUEUES",
    "ROUTES",
    "Context",
    "Outcome",
    "app",
    "build_app",
    "configure",
    "context",
    "declare_queues",
    "fleet_task",
    "publish",
    "queue_for",
    "relay_outbox",
    "reset_context",
]

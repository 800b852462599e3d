"""The fleet: the Celery app, routing, and one package per worker."""

from __future__ import annotations

from workers.app import DEAD_LETTER_QUEUE, QUEUES, ROUTES, app, configure, queue_for
from workers.shell import Context, Outcome, context, fleet_task, publish, relay_outbox, reset_context

__all__ = [
    "DEAD_LETTER_QUEUE",
    "QUEUES",
    "ROUTES",
    "Context",
    "Outcome",
    "app",
    "configure",
    "context",
    "fleet_task",
    "publish",
    "queue_for",
    "relay_outbox",
    "reset_context",
]

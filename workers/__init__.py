"""The fleet: the Celery app, routing, and one package per worker.

Each name is imported from its module on first use (``__getattr__``), so a light module of a worker
(``workers.measurer.hfleet``, read by ``ouro measure h-fleet``) is imported without Celery. The Celery
app itself is ``workers.app.app`` (the package's attribute ``app`` is that module once it is imported).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ouroboros_gates._lazy import lazy

if TYPE_CHECKING:
    from ouroboros_gates.workers.app import (
        DEAD_LETTER_QUEUE,
        QUEUES,
        ROUTES,
        build_app,
        configure,
        declare_queues,
        queue_for,
    )
    from ouroboros_gates.workers.shell import (
        Context,
        Outcome,
        context,
        fleet_task,
        publish,
        relay_outbox,
        reset_context,
    )


__all__ = [
    "DEAD_LETTER_QUEUE",
    "QUEUES",
    "ROUTES",
    "Context",
    "Outcome",
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


_HOMES = {
    "Context": "ouroboros_gates.workers.shell",
    "DEAD_LETTER_QUEUE": "ouroboros_gates.workers.app",
    "Outcome": "ouroboros_gates.workers.shell",
    "QUEUES": "ouroboros_gates.workers.app",
    "ROUTES": "ouroboros_gates.workers.app",
    "build_app": "ouroboros_gates.workers.app",
    "configure": "ouroboros_gates.workers.app",
    "context": "ouroboros_gates.workers.shell",
    "declare_queues": "ouroboros_gates.workers.app",
    "fleet_task": "ouroboros_gates.workers.shell",
    "publish": "ouroboros_gates.workers.shell",
    "queue_for": "ouroboros_gates.workers.app",
    "relay_outbox": "ouroboros_gates.workers.shell",
    "reset_context": "ouroboros_gates.workers.shell",
}
"""Where each name of ``__all__`` lives (the ``TYPE_CHECKING`` block says the same, for mypy)."""

__getattr__ = lazy(__name__, _HOMES)

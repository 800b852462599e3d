"""The fleet: the Celery app, routing, and one package per worker.

Each name is imported from its module on first use (``__getattr__``), so a light module of a worker
(``workers.measurer.hfleet``, read by ``ouro measure h-fleet``) is imported without Celery. The Celery
app itself is ``workers.app.app`` (the package's attribute ``app`` is that module once it is imported).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from workers.app import DEAD_LETTER_QUEUE, QUEUES, ROUTES, build_app, configure, declare_queues, queue_for
    from workers.shell import Context, Outcome, context, fleet_task, publish, relay_outbox, reset_context

_HOMES = {
    "DEAD_LETTER_QUEUE": "app",
    "QUEUES": "app",
    "ROUTES": "app",
    "build_app": "app",
    "configure": "app",
    "declare_queues": "app",
    "queue_for": "app",
    "Context": "shell",
    "Outcome": "shell",
    "context": "shell",
    "fleet_task": "shell",
    "publish": "shell",
    "relay_outbox": "shell",
    "reset_context": "shell",
}

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


def __getattr__(name: str) -> Any:
    """Each name from its module on first use (a submodule's name falls through to the import system)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'workers' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"workers.{home}"), name)

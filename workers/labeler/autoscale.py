"""The ``gpu`` queue's autoscaler: processes follow the queue's depth, and none is added while the GPU is
yielded to another container.

Celery's own autoscaler scales by the tasks a worker has already reserved; with a prefetch of one that
is at most one per process, so it never sees a backlog. This one counts the broker's queue as well
(``depth`` plus reserved), clamps it between ``--autoscale MAX,MIN``, and before it grows asks the GPU
sharing check whether another container holds the GPU: a process started then would only wait.
A worker that does not consume the ``gpu`` queue scales exactly as Celery's autoscaler does.

    worker_autoscaler = "workers.labeler.autoscale:GpuAutoscaler"    # workers/app.py sets it
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery.worker import state
from celery.worker.autoscale import AUTOSCALE_KEEPALIVE, Autoscaler

__all__ = ["GPU_QUEUE", "GpuAutoscaler", "target_processes"]

GPU_QUEUE = "gpu"
log = logging.getLogger(__name__)


def target_processes(depth: int, reserved: int, low: int, high: int) -> int:
    """Processes wanted for ``depth`` queued and ``reserved`` held tasks, between ``low`` and ``high``."""
    return max(low, min(high, depth + reserved))


class GpuAutoscaler(Autoscaler):  # type: ignore[misc]  # celery is untyped
    """Scales a ``gpu`` worker's pool by queue depth, and never up while the GPU is yielded."""

    def __init__(
        self,
        pool: Any,
        max_concurrency: int,
        min_concurrency: int = 0,
        worker: Any = None,
        keepalive: float = AUTOSCALE_KEEPALIVE,
        mutex: Any = None,
        depth: Callable[[], int | None] | None = None,
        gpu_holders: Callable[[], list[str]] | None = None,
    ) -> None:
        super().__init__(pool, max_concurrency, min_concurrency, worker, keepalive, mutex)
        self._depth = depth or self._broker_depth
        self._holders = gpu_holders or _docker_holders
        self.yielded_to: list[str] = []

    def _serves_gpu(self) -> bool:
        if self.worker is None:
            return True
        queues = getattr(getattr(self.worker.app, "amqp", None), "queues", None)
        consumed = getattr(queues, "consume_from", None) or {}
        return GPU_QUEUE in consumed

    def _broker_depth(self) -> int | None:
        if self.worker is None:
            return None
        try:
            with self.worker.app.connection_for_read() as conn:
                declared = conn.default_channel.queue_declare(queue=GPU_QUEUE, passive=False, durable=True)
                return int(declared.message_count)
        except Exception as exc:  # the transport's own errors vary; scaling must not stop the worker
            log.warning("gpu autoscaler: queue depth unreadable (%s)", exc)
            return None

    def _maybe_scale(self, req: Any = None) -> bool:
        if not self._serves_gpu():
            return bool(super()._maybe_scale(req))
        procs = self.processes
        depth = self._depth()
        reserved = len(state.reserved_requests)
        want = target_processes(
            depth if depth is not None else 0, reserved, self.min_concurrency, self.max_concurrency
        )
        if want > procs:
            self.yielded_to = self._holders()
            if self.yielded_to:
                log.info("gpu autoscaler: not growing, the GPU is held by %s", ", ".join(self.yielded_to))
                return False
            self.scale_up(want - procs)
            return True
        if want < procs:
            self.scale_down(procs - want)
            return True
        return False


def _docker_holders() -> list[str]:
    from ouroboros_gates.llm import endpoint_from_settings
    from ouroboros_gates.schemas.settings import load_settings
    from ouroboros_gates.workers.labeler.gpu import sharing_from_settings

    settings = load_settings("labeler")
    endpoint = endpoint_from_settings(settings)
    sharing, _ = sharing_from_settings(settings, endpoint.base_url if endpoint else None)
    try:
        return sharing.holders()
    finally:
        if sharing.engine is not None:
            sharing.engine.close()

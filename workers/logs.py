"""Logging for every process of the fleet: one level (``OURO_LOG_LEVEL``), text or JSON lines
(``OURO_LOG_FORMAT``), and a log file that rotates (``OURO_LOG_MAX_BYTES``, ``OURO_LOG_BACKUPS``).

Celery hands a worker's and beat's logging to ``configure`` through its ``setup_logging`` signal
(``workers/app.py``); ``ouro serve`` and ``ouro flower`` call it themselves. A log file is written by every
process of a worker (its pool children too): concurrent-log-handler's handler takes a lock file around each
write and rotation, so two processes never rotate the same file twice nor write into a rotated one.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from celery._state import get_current_task
from concurrent_log_handler import ConcurrentRotatingFileHandler
from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter

from ouroboros_gates.schemas.settings import Settings

__all__ = ["TEXT_FORMAT", "TaskContext", "configure", "formatter"]

TEXT_FORMAT = "[%(asctime)s: %(levelname)s/%(processName)s] %(task)s%(message)s"
_JSON_FIELDS = "%(asctime)s %(levelname)s %(name)s %(processName)s %(process)d %(message)s"
_RENAMED = {"asctime": "time", "levelname": "level", "name": "logger", "processName": "process_name"}


class TaskContext(logging.Filter):
    """Adds the Celery task a record was logged in: ``task`` (``name[id]: `` or empty) for text lines,
    ``task_name`` and ``task_id`` for JSON ones (absent outside a task)."""

    def filter(self, record: logging.LogRecord) -> bool:
        task = get_current_task()
        request = getattr(task, "request", None)
        task_id = getattr(request, "id", None)
        if task is None or task_id is None:
            record.task = ""
            return True
        # Celery's own lines about a task name it already ("Task miner.mine[…] succeeded").
        record.task = "" if record.name.startswith("celery.") else f"{task.name}[{task_id}]: "
        record.task_name, record.task_id = task.name, task_id
        return True


def formatter(settings: Settings) -> logging.Formatter:
    """The formatter ``OURO_LOG_FORMAT`` names."""
    if settings.log_format == "json":
        return JsonFormatter(_JSON_FIELDS, rename_fields=_RENAMED, reserved_attrs=[*RESERVED_ATTRS, "task"])
    return logging.Formatter(TEXT_FORMAT)


def _handler(settings: Settings, logfile: str | Path | None) -> logging.Handler:
    if not logfile:
        return logging.StreamHandler(sys.stderr)
    path = Path(logfile)
    path.parent.mkdir(parents=True, exist_ok=True)
    return ConcurrentRotatingFileHandler(
        str(path), "a", maxBytes=settings.log_max_bytes, backupCount=settings.log_backups, encoding="utf-8"
    )


def _remove_ours(logger: logging.Logger) -> None:
    """Remove and close the handlers an earlier ``configure`` installed on ``logger``."""
    for old in [h for h in logger.handlers if getattr(h, "ouroboros", False)]:
        logger.removeHandler(old)
        old.close()


def configure(settings: Settings, logfile: str | Path | None = None, level: int | str | None = None) -> None:
    """Send every logger's records to one handler (``logfile``, rotated, else stderr) at ``level`` (else
    ``OURO_LOG_LEVEL``), replacing the handlers an earlier call installed."""
    root = logging.getLogger()
    # billiard's logger (a pool child lost, a worker restarted) does not propagate: it gets the handler too.
    pool = logging.getLogger("multiprocessing")
    for logger in (root, pool):
        _remove_ours(logger)
    handler = _handler(settings, logfile)
    handler.ouroboros = True  # type: ignore[attr-defined]  # how a later call finds it
    handler.addFilter(TaskContext())
    handler.setFormatter(formatter(settings))
    root.addHandler(handler)
    root.setLevel(level or settings.log_level)
    pool.addHandler(handler)
    pool.setLevel(logging.ERROR)
    logging.captureWarnings(True)

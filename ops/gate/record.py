"""Appending to a session's log and to the spool, safely beside other hooks (hot path: stdlib only).

Claude Code runs the hooks of parallel tool calls at the same time, so every append holds an exclusive
``flock`` on the file and writes its line with one ``write``; the caller learns the byte range its line
took, which is how the gate server finds the pending call in the log. A spool file renamed away by a
flush while a hook waited for the lock is noticed (its inode no longer has that name) and reopened.
"""

from __future__ import annotations

import fcntl
import json
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook never imports typing at run time
    from typing import Any

__all__ = ["append_line", "envelope", "now_iso", "spool_entry"]


def now_iso() -> str:
    """The current UTC time, ISO 8601 with microseconds and ``Z``."""
    seconds = time.time()
    whole = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    return f"{whole}.{int(seconds % 1 * 1_000_000):06d}Z"


def envelope(payload: dict[str, Any], event_type: str = "hook") -> bytes:
    """One CSF envelope line around a payload, every field of the payload kept."""
    line = {"ts": now_iso(), "event_type": event_type, "event": payload}
    # ASCII escapes keep a lone surrogate from the payload a valid JSON line.
    return json.dumps(line, separators=(",", ":")).encode("ascii") + b"\n"


def spool_entry(run: str, path: str, hook_event: str) -> bytes:
    """One spool line: a run whose log changed and must be handed to the fleet."""
    entry = {"ts": now_iso(), "run": run, "path": path, "hook_event_name": hook_event}
    return json.dumps(entry, separators=(",", ":")).encode("ascii") + b"\n"


def append_line(path: str, line: bytes) -> tuple[int, int]:
    """Append one line under an exclusive lock; the byte range ``(start, end)`` it took. A file
    renamed or removed while waiting for the lock is reopened."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    for _ in range(5):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not _still_named(fd, path):
                continue  # a flush renamed it while we waited: write to the new one
            start = os.lseek(fd, 0, os.SEEK_END)
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            return start, start + len(line)
        finally:
            os.close(fd)  # closing releases the lock
    raise OSError(f"{path}: renamed away five times while appending")


def _still_named(fd: int, path: str) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False

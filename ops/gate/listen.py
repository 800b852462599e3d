"""The gate server's socket (``ops.gate.server``): bound where only its owner may connect, one JSON-line
request per connection, answered one at a time; the deferred warn jobs' children are collected, stopped
when overdue and started while no request waits. It ends after ``idle_s`` seconds without a request, or on
``stop``; a decision still running after ``WEDGED_S`` ends the process."""

from __future__ import annotations

import logging
import os
import select
import socket
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Protocol

from ouroboros_gates.ops.gate.budget import OverBudget, watchdog
from ouroboros_gates.ops.gate.later import Later
from ouroboros_gates.ops.gate.protocol import MAX_MESSAGE, decode, encode
from ouroboros_gates.ops.gate.sockdir import socket_path

__all__ = ["WEDGED_S", "Served", "serve"]

log = logging.getLogger("ouroboros_gates.ops.gate")
WEDGED_S = 10.0
"""A request still running after this long is stuck where no signal reaches it: the server exits."""


class Served(Protocol):
    """What the loop needs of the server (``ops.gate.server.GateServer``): its state directory, its deferred
    work, and the answer to a request."""

    state: Path
    later: Later

    def handle(self, request: dict[str, Any]) -> dict[str, Any]: ...


def _listen(path: Path) -> socket.socket:
    """A Unix socket bound at ``path`` that only its owner may open (bound under umask 177), listening."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_mask = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old_mask)
    listener.listen(128)
    return listener


def _wait_ready(later: Later, listening: int, wait: float) -> list[int]:
    """Wait up to ``wait`` seconds (less when a deferred job is due) for a request or a finished child;
    collect the children that finished and stop the overdue; the descriptors ready."""
    rest = later.wait_s()
    children = later.fds()
    ready, _, _ = select.select([listening, *children], [], [], wait if rest is None else min(wait, rest))
    if any(fd in ready for fd in children):
        later.collect()
    later.stop_overdue()
    return ready


def serve(server: Served, idle_s: float) -> None:
    """Accept requests until idle for ``idle_s`` seconds, or until ``stop``."""
    path = Path(socket_path(str(server.state)))
    path.unlink(missing_ok=True)  # the caller holds the lock: any socket left here is a dead server's
    listener = _listen(path)
    log.info("listening on %s", path)
    listening = listener.fileno()
    last = time.monotonic()
    try:
        while True:
            wait = min(1.0, max(idle_s - (time.monotonic() - last), 0.01))
            ready = _wait_ready(server.later, listening, wait)
            if listening not in ready:
                if time.monotonic() - last >= idle_s:
                    log.info("idle for %.0fs: exiting", idle_s)
                    return
                server.later.start()  # deferred work starts only while no request waits
                continue
            conn, _ = listener.accept()
            last = time.monotonic()
            if not _answer(server, conn):
                return
    finally:
        listener.close()
        path.unlink(missing_ok=True)


def _answer(server: Served, conn: socket.socket) -> bool:
    """Serve one connection; False when it asked the server to stop."""
    with conn:
        conn.settimeout(5.0)
        try:
            request = decode(_read_all(conn))
            if request.get("op") == "stop":
                conn.sendall(encode({"ok": True, "pid": os.getpid()}))
                return False
            # Only decisions are watched: a drained ping waits for deferred work as long as it takes.
            with watchdog(WEDGED_S) if request.get("op") == "decide" else nullcontext():
                answer = server.handle(request)
        except Exception as exc:  # one bad request never stops the server: it is answered and logged
            log.exception("request failed")
            answer = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        except OverBudget:  # a budget's alarm that fell outside the work it limited: this request only
            log.warning("a request ran out of time")
            answer = {"error": "the request ran out of time"}
        _reply(conn, answer)
    return True


def _reply(conn: socket.socket, answer: dict[str, Any]) -> None:
    """Send the answer; a hook that left before it (past its own deadline, it allows) is only logged."""
    try:
        conn.sendall(encode(answer))
    except OSError:
        log.warning("the hook left before its answer (it allows after its own deadline)")


def _read_all(conn: socket.socket) -> bytes:
    chunks, size = [], 0
    while chunk := conn.recv(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_MESSAGE:
            raise ValueError("request too long")
    return b"".join(chunks)

"""The hook's side of the gate server: ask over the socket, start the server when none runs (hot path).

The server holds the miners loaded and each session's events parsed, which a fresh process cannot
afford on every call (importing the schemas alone takes longer than a tool call should wait). When
no server answers (none was started, or it died: a server stuck on one request ends itself), the client
starts one in its own session (detached, so it outlives the hook) and waits for it within the hook's
deadline; while another process holds the state's lock (a server starting), it only waits, and a second
server for one state directory exits at once. The socket is found in a folder only the user can enter
(``ops.gate.sockdir``), checked before every connection: an unsafe one is never connected to.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time

from ouroboros_gates.ops.gate.paths import gates_path, lock_path, log_path, pid_path
from ouroboros_gates.ops.gate.protocol import MAX_MESSAGE, decode, encode
from ouroboros_gates.ops.gate.sockdir import UnsafeFolder, socket_path

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook never imports typing at run time
    from typing import Any

__all__ = [
    "GateUnavailable",
    "ask",
    "background",
    "gate_count",
    "module_argv",
    "notify",
    "server_pid",
    "start_server",
]


class GateUnavailable(Exception):
    """No gate server answered in time (the hook then allows, with one warning line)."""


def gate_count(state: str) -> int | None:
    """How many gates the compiled cache holds; None when there is no readable cache."""
    try:
        with open(gates_path(state), "rb") as handle:
            gates = json.load(handle).get("gates")
    except (OSError, ValueError, AttributeError):
        return None
    return len(gates) if isinstance(gates, list) else None


def module_argv(module: str, *args: str) -> list[str]:
    """This interpreter running ``module``; ``-P`` keeps the working directory (the agent's project,
    which may have its own ``ops`` package) off ``sys.path``."""
    return [sys.executable, "-P", "-m", module, *args]


def background(argv: list[str], state: str) -> None:
    """Start ``argv`` detached (its own session, output to the state's log), without waiting."""
    import subprocess  # only when something must be started: not on the hot path

    with open(log_path(state), "ab") as out:
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)


def start_server(state: str) -> None:
    """Start a gate server for ``state`` in the background."""
    background(module_argv("ouroboros_gates.ops.gate.start", "--state", state), state)


def _starting(state: str) -> bool:
    """Whether a process holds the state's lock: a server that runs, or is starting and not listening yet."""
    try:
        fd = os.open(lock_path(state), os.O_RDONLY | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock taken here (a server that lost it to this probe: see ask)
    return False


def _exchange(path: str, request: dict[str, Any], deadline: float) -> dict[str, Any]:
    import _socket  # only when a gate binds; the C module: ``socket`` builds its enums on import (~3 ms)

    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(max(deadline - time.monotonic(), 0.001))
        conn.connect(path)
        conn.sendall(encode(request))
        conn.shutdown(_socket.SHUT_WR)
        chunks: list[bytes] = []
        size = 0
        while True:
            conn.settimeout(max(deadline - time.monotonic(), 0.001))
            chunk = conn.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_MESSAGE:
                raise ValueError("the gate server's answer is too long")
    finally:
        conn.close()
    return decode(b"".join(chunks))


def ask(state: str, request: dict[str, Any], deadline: float, start: bool = True) -> dict[str, Any]:
    """The server's answer to ``request`` before ``deadline`` (``time.monotonic``), starting a server
    when none listens and ``start`` is set; ``GateUnavailable`` when none answers in time."""
    try:
        path = socket_path(state)
    except UnsafeFolder as exc:
        raise GateUnavailable(f"no gate server asked: {exc}") from exc
    started = False
    while True:
        try:
            return _exchange(path, request, deadline)
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            if not start:
                raise GateUnavailable(f"no gate server on {path}") from exc
            if not started:
                # A server that finds the lock held by this probe exits; the probe then starts one itself.
                started = True
                if not _starting(state):
                    start_server(state)
        except (OSError, ValueError) as exc:  # TimeoutError is an OSError
            raise GateUnavailable(f"gate server on {path}: {type(exc).__name__}: {exc}") from exc
        if time.monotonic() + 0.05 >= deadline:
            raise GateUnavailable(
                f"the gate server for {state} did not answer in time (log: {log_path(state)})"
            )
        time.sleep(0.05)


def notify(state: str, request: dict[str, Any], wait_s: float = 0.2) -> bool:
    """Ask a running server without starting one; False when none answers within ``wait_s``."""
    try:
        ask(state, request, time.monotonic() + wait_s, start=False)
    except GateUnavailable:
        return False
    return True


def server_pid(state: str) -> int | None:
    """The pid a gate server of ``state`` recorded, if that process exists and has not ended (a server
    that ended and whose parent has not reaped it yet is a zombie: ended)."""
    try:
        with open(pid_path(state)) as handle:
            pid = int(handle.read().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            ended = handle.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        ended = False  # no /proc here: the signal's answer is all there is
    return None if ended else pid

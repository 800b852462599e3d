"""Inside the fixer's sandbox: the agent's only way out, a proxy port on the sandbox's own loopback.

The sandbox has its own network namespace (nothing but ``lo``) and may create no Unix socket, so the worker
passes in one end of a socket pair. This program listens on ``127.0.0.1:<free port>``, starts the agent
with ``HTTP(S)_PROXY`` naming that port, and hands each connection to the worker: it asks for a new
channel on the passed socket, receives one end of a fresh socket pair (``SCM_RIGHTS``) and copies bytes
both ways. Every decision (which host, whether it is allowed) is the worker's proxy's, outside; this side
only carries bytes, so an agent that kills or replaces it gains nothing.

It runs as ``python -I -S -c <this file's text> CONTROL_FD -- AGENT ARGV...``, so it imports the standard
library only (the package need not be readable inside). ``splice`` is shared with the worker's proxy.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading

__all__ = ["PROXY_VARIABLES", "main", "splice"]

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
_CHUNK = 65536


def _copy(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(_CHUNK):
            target.sendall(data)
    except OSError:
        pass  # either side went away: what is left is to tell the other
    finally:
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)


def splice(one: socket.socket, other: socket.socket) -> None:
    """Copy bytes both ways until both directions end, then close both sockets."""
    backward = threading.Thread(target=_copy, args=(other, one), daemon=True)
    backward.start()
    _copy(one, other)
    backward.join()
    one.close()
    other.close()


def _channel(control: socket.socket, lock: threading.Lock) -> socket.socket | None:
    """A fresh channel to the worker's proxy, or None once the worker stopped answering."""
    with lock:
        try:
            control.sendall(b"c")
            _, fds, _, _ = socket.recv_fds(control, 1, 1)
        except OSError:
            return None
    return socket.socket(fileno=fds[0]) if fds else None


def _serve(listener: socket.socket, control: socket.socket) -> None:
    lock = threading.Lock()
    while True:
        client, _ = listener.accept()
        channel = _channel(control, lock)
        if channel is None:
            client.close()
            continue
        threading.Thread(target=splice, args=(client, channel), daemon=True).start()


def main(argv: list[str]) -> int:
    """Listen, start the agent (``argv`` after ``--``) with the proxy variables, return its exit status."""
    control = socket.socket(fileno=int(argv[0]))
    agent = argv[2:] if argv[1:2] == ["--"] else argv[1:]
    listener = socket.create_server(("127.0.0.1", 0))
    proxy = f"http://127.0.0.1:{listener.getsockname()[1]}"
    environment = {**os.environ, **dict.fromkeys(PROXY_VARIABLES, proxy), "NO_PROXY": "", "no_proxy": ""}
    threading.Thread(target=_serve, args=(listener, control), daemon=True).start()
    try:
        child = subprocess.Popen(agent, env=environment)
    except OSError as exc:
        print(f"cannot start the fixer agent {agent[0]!r}: {exc}", file=sys.stderr)
        return 127
    signal.signal(signal.SIGTERM, lambda *_: child.terminate())
    status = child.wait()
    return 128 - status if status < 0 else status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

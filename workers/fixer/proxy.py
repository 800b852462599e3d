"""The worker's side of the sandbox's network: an HTTP proxy that reaches allow-listed hosts only.

The sandbox's bridge (``bridge.py``) asks for a channel with one byte on the control socket; the proxy
answers with one end of a fresh socket pair (``SCM_RIGHTS``) and serves the other end as a proxy client:
``CONNECT host:port`` (HTTPS, tunnelled) or an absolute-form ``http://host:port/…`` request (forwarded with
``Connection: close``). A host:port not on the allow-list (``OURO_FIXER_HOSTS``) gets ``403`` and nothing
is connected: the fleet's Redis and PostgreSQL, the API and every other address stay out of reach unless
an operator lists them. Every attempt is recorded (``attempts``), allowed or not.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from ouroboros_gates.schemas.errors import ConfigurationError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.fixer.bridge import splice

__all__ = [
    "AGENT_HOSTS",
    "FORGE_HOSTS",
    "AllowedHost",
    "Attempt",
    "ProxyServer",
    "allowed_hosts",
    "parse_hosts",
]

#: Where the default agent (the Claude Code CLI) reaches its model.
AGENT_HOSTS = "api.anthropic.com:443"
#: What a GitHub forge adds: git over HTTPS and the REST API.
FORGE_HOSTS = "github.com:443 api.github.com:443"

_HEAD_LIMIT = 64 * 1024
_HEAD_TIMEOUT_S = 30.0
_CONNECT_TIMEOUT_S = 30.0
_MAX_CONNECTIONS = 64


@dataclass(frozen=True)
class AllowedHost:
    """One allow-list entry: a host name or address, and its port (None: 80 and 443)."""

    host: str
    port: int | None

    def admits(self, host: str, port: int) -> bool:
        """Whether ``host:port`` is this entry (host names compare case-insensitively)."""
        return host.lower().rstrip(".") == self.host and (
            port in (80, 443) if self.port is None else port == self.port
        )


@dataclass(frozen=True)
class Attempt:
    """One connection the agent asked for, and what the proxy did."""

    at: str
    target: str
    allowed: bool
    reason: str


def allowed_hosts(settings: Settings) -> tuple[AllowedHost, ...]:
    """``OURO_FIXER_HOSTS`` when set (empty: no network at all); unset, the default agent's model host and,
    with a GitHub forge, GitHub's. ConfigurationError names the key and the bad entry."""
    text = settings.fixer_hosts
    if text is None:
        text = f"{AGENT_HOSTS} {FORGE_HOSTS}" if settings.forge.startswith("github:") else AGENT_HOSTS
    try:
        return parse_hosts(text)
    except ValueError as exc:
        raise ConfigurationError(f"OURO_FIXER_HOSTS: {exc}") from exc


def parse_hosts(text: str) -> tuple[AllowedHost, ...]:
    """``host[:port]`` entries separated by commas or spaces; ValueError naming the first bad entry."""
    return tuple(_allowed_host(entry) for entry in text.replace(",", " ").split())


def _allowed_host(entry: str) -> AllowedHost:
    """One ``host[:port]`` entry; ValueError naming it when it is not one."""
    try:
        host, port = _split_target(entry, default=None)
    except ValueError:
        host, port = "", None
    if not _is_host_port(host, port):
        raise ValueError(f"{entry!r} is not host or host:port")
    return AllowedHost(host.lower().rstrip("."), port)


def _is_host_port(host: str, port: int | None) -> bool:
    """Whether ``host`` is a bare host (no path, user, query or fragment) and ``port`` a TCP port or None."""
    return bool(host) and not any(c in host for c in "/@?#") and (port is None or 0 < port < 65536)


def _split_target(target: str, default: int | None) -> tuple[str, int | None]:
    """``host:port``, ``[v6]:port`` or a bare host; the port is ``default`` when absent."""
    if target.startswith("["):
        host, _, rest = target[1:].partition("]")
        port_text = rest.removeprefix(":") if rest.startswith(":") else ""
    elif target.count(":") == 1:
        host, _, port_text = target.partition(":")
    else:
        host, port_text = target, ""
    if not port_text:
        return host, default
    if not port_text.isdigit():
        raise ValueError(f"bad port in {target!r}")
    return host, int(port_text)


class ProxyServer:
    """Serves the sandbox's channels, handed over ``control``, to the allow-listed hosts only."""

    def __init__(self, control: socket.socket, allowed: Iterable[AllowedHost]) -> None:
        self._control, self._allowed = control, tuple(allowed)
        self._slots = threading.BoundedSemaphore(_MAX_CONNECTIONS)
        self._lock = threading.Lock()
        self.attempts: list[Attempt] = []
        self._thread = threading.Thread(target=self._hand_out, name="fixer-proxy", daemon=True)

    def start(self) -> ProxyServer:
        """Start answering the bridge; returns self."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop answering (the bridge then gets no more channels) and wait for the answering thread."""
        with contextlib.suppress(OSError):
            self._control.shutdown(socket.SHUT_RDWR)
        self._control.close()
        self._thread.join(timeout=10)

    def _hand_out(self) -> None:
        while (ours := self._next_channel()) is not None:
            if not self._slots.acquire(blocking=False):  # too many at once: refuse, never queue unbounded
                ours.close()
                continue
            threading.Thread(target=self._serve, args=(ours,), daemon=True).start()

    def _next_channel(self) -> socket.socket | None:
        """Wait for the bridge to ask, and hand it one end of a fresh socket pair; our end, or None once
        the control socket is closed."""
        try:
            asked = self._control.recv(1)
        except OSError:
            return None
        if not asked:
            return None
        ours, theirs = socket.socketpair()
        try:
            socket.send_fds(self._control, [b"f"], [theirs.fileno()])
        except OSError:
            ours.close()
            return None
        finally:
            theirs.close()
        return ours

    def _serve(self, client: socket.socket) -> None:
        try:
            self._proxy(client)
        except ValueError as exc:
            self._record("-", False, f"bad request: {exc}")
            _answer(client, 400, f"bad request: {exc}")
        except OSError:
            client.close()
        finally:
            self._slots.release()

    def _proxy(self, client: socket.socket) -> None:
        client.settimeout(_HEAD_TIMEOUT_S)
        head, rest = _read_head(client)
        method, target, version, headers = _parse_head(head)
        connect = method == "CONNECT"
        host, port, path = _target(method, target)
        upstream = self._connect(client, host, port)
        if upstream is None:
            return
        client.settimeout(None)
        upstream.settimeout(None)
        if connect:
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            upstream.sendall(_forwarded(method, path, version, headers))
        if rest:
            upstream.sendall(rest)
        splice(client, upstream)

    def _connect(self, client: socket.socket, host: str, port: int) -> socket.socket | None:
        """The connection to ``host:port`` when it is allow-listed and answers; else None, the client
        answered (403 or 502). Every attempt is recorded."""
        where = f"{host}:{port}"
        if not self._admits(host, port):
            self._record(where, False, "not on the allow-list (OURO_FIXER_HOSTS)")
            _answer(client, 403, f"{where} is not on the fixer sandbox's allow-list (OURO_FIXER_HOSTS)")
            return None
        try:
            upstream = socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT_S)
        except OSError as exc:
            self._record(where, True, f"cannot connect: {exc}")
            _answer(client, 502, f"cannot connect to {where}: {exc}")
            return None
        self._record(where, True, "connected")
        return upstream

    def _admits(self, host: str, port: int) -> bool:
        """Whether an allow-list entry admits ``host:port``."""
        return any(entry.admits(host, port) for entry in self._allowed)

    def _record(self, target: str, allowed: bool, reason: str) -> None:
        with self._lock:
            self.attempts.append(Attempt(datetime.now(UTC).isoformat(), target, allowed, reason))


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    """The request head (through the blank line) and whatever arrived after it."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > _HEAD_LIMIT:
            raise ValueError("request head too long")
        chunk = client.recv(8192)
        if not chunk:
            raise ValueError("connection closed before the request head ended")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _parse_head(head: bytes) -> tuple[str, str, str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise ValueError(f"not an HTTP request line: {lines[0][:80]!r}")
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon:
            raise ValueError(f"bad header line {line[:80]!r}")
        headers.append((name.strip(), value.strip()))
    return parts[0], parts[1], parts[2], headers


def _target(method: str, target: str) -> tuple[str, int, str]:
    """(host, port, origin-form path) of a CONNECT authority or an absolute ``http://`` URL."""
    if method == "CONNECT":
        return _connect_target(target)
    return _http_target(target)


def _connect_target(target: str) -> tuple[str, int, str]:
    """A CONNECT authority: ``host:port``, 443 when no port is named."""
    host, port = _split_target(target, default=443)
    return host, port or 443, ""


def _http_target(target: str) -> tuple[str, int, str]:
    """An absolute ``http://`` URL: its host, its port (80 when none is named) and its path."""
    if not target.startswith("http://"):
        raise ValueError(f"a proxied request must name an http:// URL (or use CONNECT), not {target[:80]!r}")
    authority, slash, path = target.removeprefix("http://").partition("/")
    host, port = _split_target(authority, default=80)
    return host, port or 80, slash + path or "/"


def _forwarded(method: str, path: str, version: str, headers: list[tuple[str, str]]) -> bytes:
    kept = [
        (k, v)
        for k, v in headers
        if k.lower() not in {"proxy-connection", "proxy-authorization", "connection"}
    ]
    lines = [f"{method} {path} {version}", *(f"{k}: {v}" for k, v in kept), "Connection: close", "", ""]
    return "\r\n".join(lines).encode("latin-1")


def _answer(client: socket.socket, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    body = (text + "\n").encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: "
        f"{len(body)}\r\nConnection: close"
    )
    with contextlib.suppress(OSError):  # the agent may have hung up first
        client.sendall(head.encode() + b"\r\n\r\n" + body)
    client.close()

"""The API against clients that misbehave, over real sockets: a real ``ouro serve --api-only`` process for the
size limit (with its memory), hosts, tokens and parameters; uvicorn with the same protocol and shorter
deadlines, in this process, for heads and bodies that trickle in."""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from ouroboros_gates.ops.api import LEDGER
from ouroboros_gates.ops.api.serve import HeadDeadlineProtocol, server_options
from ouroboros_gates.schemas.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "s3cret-token"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """``ouro serve --api-only`` on a free port, a fresh state, a token and one extra trusted host."""
    state = tmp_path_factory.mktemp("limits") / "state"
    port = _free_port()
    env = {
        **os.environ,
        "OURO_STATE": str(state),
        "OURO_BROKER_URL": "memory://",
        "OURO_API_TOKEN": TOKEN,
        "OURO_API_HOSTS": "ops.example.test",
    }
    command = [
        sys.executable,
        "-c",
        "from ouroboros_gates.ops.cli import main; main()",
        "serve",
        "--api-only",
        "--port",
        str(port),
    ]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/api/health", timeout=1).status_code == 200:
                break
        assert process.poll() is None, process.stderr.read() if process.stderr else b""
        time.sleep(0.1)
    try:
        yield url, process, state
    finally:
        process.terminate()
        process.wait(timeout=30)


def _raw(url: str, request: bytes, body_chunks: int = 0, chunk: bytes = b"") -> bytes:
    """Send ``request`` (and up to ``body_chunks`` chunks while the server reads), then the response."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request)
        sock.settimeout(0.05)
        answer = b""
        for _ in range(body_chunks):
            with contextlib.suppress(TimeoutError):
                answer += sock.recv(65536)
            if answer:
                break
            try:
                sock.sendall(chunk)
            except OSError:  # the server closed its side after answering
                break
        sock.settimeout(30)
        with contextlib.suppress(OSError):
            while not answer.endswith(b"}") and (part := sock.recv(65536)):
                answer += part
        return answer


def test_a_200_mb_post_without_a_token_is_refused_from_its_length_and_costs_no_memory(served: tuple) -> None:
    url, process, _state = served
    before = _rss_kib(process.pid)
    head = (
        b"POST /api/publish/Probe HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 209715200\r\n\r\n"
    )
    answer = _raw(url, head, body_chunks=200, chunk=b"x" * (1 << 20))
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert _rss_kib(process.pid) - before < 50 * 1024  # the body was never buffered
    chunked = (
        b"POST /api/publish/Probe HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
        + TOKEN.encode()
        + b"\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    streamed = _raw(url, chunked, body_chunks=200, chunk=b"100000\r\n" + b"x" * 0x100000 + b"\r\n")
    assert streamed.startswith(b"HTTP/1.1 413"), streamed[:200]  # no length given: counted as it arrives
    assert _rss_kib(process.pid) - before < 50 * 1024


def test_only_trusted_hosts_are_answered(served: tuple) -> None:
    url = served[0]
    for host, status in (
        ("evil.example", 400),
        ("127.0.0.1", 200),
        ("localhost", 200),
        ("ops.example.test", 200),
        ("ops.example.test.evil.example", 400),
    ):
        response = httpx.get(f"{url}/api/findings", headers={"Host": host})
        assert response.status_code == status, host


def test_tokens_and_parameters_that_do_not_fit_are_400_not_500(served: tuple) -> None:
    url = served[0]
    raw = (
        b"POST /api/replay HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
        b"t\xc3\xb6k\r\nContent-Length: 0\r\n\r\n"
    )
    answer = _raw(url, raw)
    assert answer.startswith(b"HTTP/1.1 400") and b"malformed bearer token" in answer, answer[:300]
    assert httpx.post(f"{url}/api/replay", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert httpx.post(f"{url}/api/replay", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    huge = str(2**64)
    for path, params in (
        ("/api/findings", {"after": huge}),
        ("/api/events", {"limit": "9" * 30}),
        ("/api/ledger/fixer_sessions", {"ticket": huge}),
        ("/api/labels", {"ticket": huge}),
        ("/api/decisions", {"offset": huge}),
        ("/api/dead_letters", {"before": "-1"}),
    ):
        response = httpx.get(url + path, params=params)
        assert response.status_code == 400, (path, response.status_code, response.text)
        assert response.json()["detail"], path


def _state_files(state: Path) -> dict[str, str]:
    return {
        str(p.relative_to(state)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(state.rglob("*"))
        if p.is_file() and "sqlite" not in p.name  # the log itself: the ledger's catch-up thread writes it
    }


def test_reads_never_write(served: tuple) -> None:
    url, _process, state = served
    (state / "export.key").unlink()
    before = _state_files(state)
    reads = [
        "/",
        "/docs",
        "/openapi.json",
        "/api/health",
        "/api/status",
        "/api/events",
        "/api/findings",
        "/api/backtests",
        "/api/spend",
        "/api/labeler",
        "/api/ouroboros",
        "/api/decisions",
        "/api/labels",
        "/api/dead_letters",
        "/metrics",
        *(f"/api/ledger/{table}" for table in LEDGER),
    ]
    for path in reads:
        assert httpx.get(url + path).status_code < 500, path
    export = httpx.get(f"{url}/api/export/findings")
    assert export.status_code == 503 and "no export key yet" in export.json()["detail"]
    assert _state_files(state) == before  # no key file made by a read, nothing else either


@contextlib.contextmanager
def _uvicorn(tmp_path: Path, head_s: float, body_s: float) -> Iterator[str]:
    """The API under uvicorn with the served protocol, its deadlines shortened, on a free port."""

    class Quick(HeadDeadlineProtocol):
        head_timeout_s = head_s

    options = server_options(
        Settings(state=tmp_path / "s", broker_url="memory://", api_token=TOKEN),
        catch_up_every_s=None,
        body_timeout_s=body_s,
    )
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(**{**options, "http": Quick}, host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def _trickle(address: str, parts: list[bytes], pause_s: float, until: bytes = b"HTTP/1.1") -> bytes:
    """Send ``parts`` one at a time, ``pause_s`` apart, until the answer holds ``until`` or the server
    closes."""
    host, port = address.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.settimeout(pause_s)
        answer = b""
        for part in parts:
            try:
                sock.sendall(part)
                answer += sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if until in answer:
                break
        sock.settimeout(10)
        with contextlib.suppress(OSError):
            while part := sock.recv(65536):
                answer += part
        return answer


def test_a_head_that_trickles_in_is_cut_with_408(tmp_path: Path) -> None:
    with _uvicorn(tmp_path, head_s=1.0, body_s=30.0) as address:
        head = [b"GET /api/health HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n", *[b"X-Slow: 1\r\n"] * 40, b"\r\n"]
        answer = _trickle(address, head, pause_s=0.2)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert _trickle(address, [b""] * 40, pause_s=0.2).startswith(b"HTTP/1.1 408")  # nothing sent at all
        # A whole request is answered, and the next one on the same connection is timed again.
        whole = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        parts = [whole, b"GET /api/health HTTP/1.1\r\n", *[b"X-Slow: 1\r\n"] * 40]
        again = _trickle(address, parts, pause_s=0.2, until=b"408")
        assert again.startswith(b"HTTP/1.1 200") and b"HTTP/1.1 408" in again, again[:400]


def test_a_body_that_trickles_in_is_cut_with_408(tmp_path: Path) -> None:
    with _uvicorn(tmp_path, head_s=30.0, body_s=1.0) as address:
        head = (
            b"POST /api/publish/Probe HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            + TOKEN.encode()
            + b"\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n"
        )
        answer = _trickle(address, [head, *[b" "] * 60], pause_s=0.2)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"did not arrive within" in answer

"""What the fleet's process tests share: ``ouro`` commands as real processes (each in its own process group),
a free port, waiting for an HTTP server, and stopping a process the way systemd and Docker do."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "workers"))  # _fleet: the fleet tests' own helpers

from _fleet import wait_for as poll  # noqa: E402

__all__ = [
    "ROOT",
    "alive",
    "children",
    "finished_tasks",
    "flower_api",
    "flower_env",
    "free_port",
    "log_tails",
    "ouro",
    "poll",
    "run",
    "terminate",
    "wait_http",
]


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ouro(*args: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``ouro ARGS`` in its own process group, its output in ``log``."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-c", "from ouroboros_gates.ops.cli import main; main()", *args],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def run(*args: str, env: dict[str, str], timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    """``ouro ARGS`` to its end (``timeout_s`` is the test's bound, never a measure of speed)."""
    return subprocess.run(
        [sys.executable, "-c", "from ouroboros_gates.ops.cli import main; main()", *args],
        cwd=ROOT,
        env={**env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def wait_http(
    url: str, process: subprocess.Popen[bytes], log: Path, timeout_s: float = 90, **kw: Any
) -> httpx.Response:
    """The first answer of ``url`` (any status), failing with the log when the process exits or never
    listens."""
    deadline = time.monotonic() + timeout_s
    while True:
        assert process.poll() is None, f"exited with {process.returncode}: {log.read_text()[-3000:]}"
        try:
            return httpx.get(url, timeout=5, **kw)
        except httpx.TransportError:
            assert time.monotonic() < deadline, (
                f"{url} did not answer in {timeout_s} s: {log.read_text()[-3000:]}"
            )
            time.sleep(0.3)


def terminate(process: subprocess.Popen[bytes], timeout_s: float = 90) -> int | None:
    """SIGTERM to the process alone (as systemd and Docker stop a service); its exit status, or None when it
    had to be killed (then its whole group is)."""
    if process.poll() is not None:
        return process.returncode
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return None


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(status.parent.name))
    return found


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def flower_env(
    tmp_path: Path, redis_url: str, pg_url: str, auth: tuple[str, str], **more: str
) -> dict[str, str]:
    """The environment of a fleet and its Flower: Redis, PostgreSQL, a state and a root under ``tmp_path``,
    Flower's login, and ``more`` settings."""
    return {
        **os.environ,
        "OURO_BROKER_URL": redis_url,
        "OURO_DATABASE_URL": pg_url,
        "OURO_STATE": str(tmp_path / "state"),
        "OURO_ROOTS": str(tmp_path),
        "OURO_FLOWER_BASIC_AUTH": ":".join(auth),
        **more,
    }


def flower_api(base: str, path: str, auth: tuple[str, str]) -> Any:
    """Flower's JSON answer to ``path`` (None while it answers anything but 200)."""
    answer = httpx.get(base + path, auth=auth, timeout=30)
    return answer.json() if answer.status_code == 200 else None


def finished_tasks(tasks: dict[str, Any] | None, ids: set[str]) -> dict[str, Any] | None:
    """Flower's tasks ``ids`` once each has ended (SUCCESS or FAILURE), else None."""
    done = {i: t for i, t in (tasks or {}).items() if i in ids and t.get("state") in {"SUCCESS", "FAILURE"}}
    return done if set(done) == ids else None


def log_tails(logs: dict[str, Path]) -> str:
    """The end of each process's log, under its name: what a failing wait shows."""
    return "\n".join(f"== {n}\n{p.read_text(errors='replace')[-2500:]}" for n, p in logs.items())

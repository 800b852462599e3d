"""``ouro flower`` starts real Flower on the test's Redis, behind basic auth, bound to 127.0.0.1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
USER, PASSWORD = "ops", "flower-test-secret"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ouro(*args: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-c", "from ouroboros_gates.ops.cli import main; main()", *args],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        # Flower may not stop on SIGTERM or an early SIGINT; it holds no state a test needs, so it is killed.
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=3)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_flower_refuses_requests_without_credentials(tmp_path: Path, redis_url: str) -> None:
    port = _free_port()
    env = {**os.environ, "OURO_BROKER_URL": redis_url, "OURO_STATE": str(tmp_path / "state"),
           "OURO_FLOWER_BASIC_AUTH": f"{USER}:{PASSWORD}"}  # fmt: skip
    log = tmp_path / "flower.log"
    process = _ouro("flower", f"--port={port}", env=env, log=log)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.skip(f"Flower exited with {process.returncode} before serving: {log.read_text()[-1500:]}")
            try:
                first = httpx.get(base + "/", timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    pytest.skip(f"Flower did not listen on {port} within 60 s: {log.read_text()[-1500:]}")
                time.sleep(0.3)
        assert first.status_code == 401
        assert first.headers["www-authenticate"].startswith("Basic")
        assert httpx.get(base + "/", auth=(USER, "wrong"), timeout=5).status_code == 401
        assert httpx.get(base + "/workers", timeout=5).status_code == 401
        assert httpx.get(base + "/", auth=(USER, PASSWORD), timeout=5).status_code == 200
        # The password went through the environment: the process's command line does not carry it.
        assert PASSWORD not in Path(f"/proc/{process.pid}/cmdline").read_bytes().decode(errors="replace")
    finally:
        _stop(process)


def test_flower_never_starts_without_auth(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OURO_FLOWER_BASIC_AUTH"}
    env["OURO_STATE"] = str(tmp_path / "state")
    log = tmp_path / "flower.log"
    process = _ouro("flower", f"--port={_free_port()}", env=env, log=log)
    assert process.wait(timeout=60) == 2
    assert "OURO_FLOWER_BASIC_AUTH" in log.read_text()


def test_without_the_flower_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from typer.testing import CliRunner

    from ouroboros_gates.ops.cli import app

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "flower" else real(name, *a))
    result = CliRunner().invoke(app, ["flower"])
    assert result.exit_code == 1 and "pip install 'ouroboros-gates[flower]'" in str(result.exception)

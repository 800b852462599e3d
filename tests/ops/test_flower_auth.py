"""``ouro flower`` starts real Flower on the test's Redis, behind basic auth, bound to 127.0.0.1."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest
from fleet_support import free_port, ouro, terminate

USER, PASSWORD = "ops", "flower-test-secret"


def test_flower_refuses_requests_without_credentials(tmp_path: Path, redis_url: str) -> None:
    port = free_port()
    env = {
        **os.environ,
        "OURO_BROKER_URL": redis_url,
        "OURO_STATE": str(tmp_path / "state"),
        "OURO_FLOWER_BASIC_AUTH": f"{USER}:{PASSWORD}",
    }
    log = tmp_path / "flower.log"
    process = ouro("flower", f"--port={port}", env=env, log=log)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.skip(
                    f"Flower exited with {process.returncode} before serving: {log.read_text()[-1500:]}"
                )
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
        assert terminate(process) == 0  # SIGTERM stops Flower (it used to hang in its inspect threads)


def test_flower_never_starts_without_auth(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OURO_FLOWER_BASIC_AUTH"}
    env["OURO_STATE"] = str(tmp_path / "state")
    log = tmp_path / "flower.log"
    process = ouro("flower", f"--port={free_port()}", env=env, log=log)
    assert process.wait(timeout=60) == 2
    assert "OURO_FLOWER_BASIC_AUTH" in log.read_text()


def test_without_the_flower_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from typer.testing import CliRunner

    from ouroboros_gates.ops.cli import app

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "flower" else real(name, *a)
    )
    result = CliRunner().invoke(app, ["flower"])
    assert result.exit_code == 1 and "pip install 'ouroboros-gates[flower]'" in str(result.exception)

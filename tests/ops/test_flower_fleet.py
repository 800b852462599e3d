"""Flower against the fleet's own configuration: two ``ouro worker`` processes on Redis and ``ouro flower``,
read back through Flower's HTTP API (both workers by name, the tasks they ran with their arguments and
results, a dead letter), then each stopped with SIGTERM."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest
from fleet_support import (
    finished_tasks,
    flower_api,
    flower_env,
    free_port,
    log_tails,
    ouro,
    poll,
    terminate,
    wait_http,
)

from ouroboros_gates.schemas import IngestRun, Probe, content_id
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import build_app, declare_queues, publish

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(420)]
AUTH = ("ops", "flower-fleet-secret")
MINER = ("worker", "-Q", "miner", "-n", "mine-one@%h", "-c", "1", "--max-tasks-per-child", "50", "-O", "fair")


def _api(base: str, path: str) -> Any:
    return flower_api(base, path, AUTH)


def test_flower_shows_both_workers_their_tasks_and_a_dead_letter(
    tmp_path: Path, redis_url: str, pg_url: str
) -> None:
    env = flower_env(tmp_path, redis_url, pg_url, AUTH)
    logs = {name: tmp_path / f"{name}.log" for name in ("fleet", "miner", "flower")}
    port = free_port()
    processes = {
        "fleet": ouro("worker", "-Q", "fleet", env=env, log=logs["fleet"]),  # named fleet@<host>
        "miner": ouro(*MINER, env=env, log=logs["miner"]),  # named by -n, options passed through
        "flower": ouro("flower", f"--port={port}", env=env, log=logs["flower"]),
    }
    base = f"http://127.0.0.1:{port}"

    def said() -> str:
        return log_tails(logs)

    try:
        wait_http(base + "/", processes["flower"], logs["flower"])
        host = socket.gethostname()
        names = {f"fleet@{host}", f"mine-one@{host}"}
        poll(
            lambda: names <= set(_api(base, "/api/workers?refresh=1") or {}),
            180,
            f"Flower to show {names}",
            said,
        )
        sender = build_app(Settings(broker_url=redis_url), include=False)
        declare_queues(sender)
        probe = Probe(message_id=content_id("flower", "probe"), probe="seen-in-flower")
        outside = IngestRun(message_id=content_id("flower", "outside"), path="/etc/hostname", run="outside")
        publish(probe, via=sender)
        publish(outside, via=sender)
        tasks = poll(
            lambda: finished_tasks(_api(base, "/api/tasks"), {probe.message_id, outside.message_id}),
            180,
            "both tasks in Flower",
            said,
        )
        assert tasks[probe.message_id]["state"] == "SUCCESS"
        assert tasks[probe.message_id]["result"] == "'appended'"
        assert "seen-in-flower" in tasks[probe.message_id]["args"]
        assert tasks[probe.message_id]["worker"] == f"fleet@{host}"
        assert tasks[outside.message_id]["result"] == "'dead-lettered'"
        assert tasks[outside.message_id]["worker"] == f"mine-one@{host}"
        parked = [t for t in (_api(base, "/api/tasks") or {}).values() if t["name"] == "fleet.dead_letter"]
        assert len(parked) == 1 and "outside the configured roots" in parked[0]["args"]
        # The queues the workers consume, with their depths (the dead-letter queue has no consumer: its
        # messages show as the fleet.dead_letter tasks above).
        queues = {q["name"]: q["messages"] for q in _api(base, "/api/queues/length")["active_queues"]}
        assert queues == {"fleet": 0, "miner": 0}
    finally:
        codes = {name: terminate(process) for name, process in processes.items()}
    # SIGTERM stops each of them cleanly (None: it had to be killed).
    assert codes == {"fleet": 0, "miner": 0, "flower": 0}, said()


def test_flower_refuses_an_empty_user_or_password(tmp_path: Path) -> None:
    for auth in ("admin:", ":secret", "admin:secret,guest:"):
        env = {**os.environ, "OURO_STATE": str(tmp_path / "state"), "OURO_FLOWER_BASIC_AUTH": auth}
        log = tmp_path / "flower.log"
        log.write_text("")
        process = ouro("flower", f"--port={free_port()}", env=env, log=log)
        assert process.wait(timeout=60) == 2, auth
        assert "OURO_FLOWER_BASIC_AUTH: " in log.read_text() and "user:password" in log.read_text(), (
            log.read_text()
        )

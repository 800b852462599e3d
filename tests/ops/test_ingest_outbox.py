"""``ouro ingest`` sends its messages through the event log's outbox, as the workers send their follow-ups:
published at once on a reachable broker, queued once however often it is run, and kept for the outbox
sweep when the broker is down (real Redis, a real SQLite event log, the real command line)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import redis

from ouroboros_gates.events import open_store
from ouroboros_gates.workers.app import build_app
from ouroboros_gates.workers.shell import relay_outbox

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "examples" / "runs" / "d2f0a8c6-7e3b-4c51-9b28-1a4e6d0f3c95"


def ingest(run: Path, database: str, broker: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "OURO_STATE": str(run.parents[1] / "s"),
        "OURO_ROOTS": str(run.parents[1]),
        "OURO_DATABASE_URL": database,
        "OURO_BROKER_URL": broker,
        "COLUMNS": "200",
    }
    return subprocess.run(
        [sys.executable, "-m", "ouroboros_gates.ops.cli", "ingest", str(run)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _queued(url: str) -> list[dict[str, object]]:
    bodies = [json.loads(raw) for raw in redis.Redis.from_url(url).lrange("miner", 0, -1)]
    return [{"task": body["headers"]["task"], "id": body["headers"]["id"]} for body in bodies]


def test_ingest_queues_each_run_once_and_publishes_it(tmp_path: Path, redis_url: str) -> None:
    run = shutil.copytree(RUN, tmp_path / "runs" / RUN.name)
    database = f"sqlite:///{tmp_path / 'events.sqlite'}"
    first = ingest(run, database, redis_url)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(f"queued {RUN.name} (")
    [sent] = _queued(redis_url)
    assert sent["task"] == "miner.ingest" and str(sent["id"]) in first.stdout
    again = ingest(run, database, redis_url)
    assert again.returncode == 0 and again.stdout.startswith(f"already queued {RUN.name} (")
    assert len(_queued(redis_url)) == 1  # the outbox holds it once; the sweep, not a rerun, sends again
    store = open_store(database)
    assert store.pending_outbox() == []
    store.close()


def test_a_broker_that_is_down_leaves_the_message_in_the_outbox_for_the_sweep(
    tmp_path: Path, redis_url: str
) -> None:
    run = shutil.copytree(RUN, tmp_path / "runs" / RUN.name)
    database = f"sqlite:///{tmp_path / 'events.sqlite'}"
    down = f"redis://127.0.0.1:{_closed_port()}/0"
    result = ingest(run, database, down)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"queued {RUN.name} (")
    assert "1 message(s) not published (broker unreachable): kept in the outbox" in " ".join(
        result.stderr.split()
    )
    store = open_store(database)
    [pending] = store.pending_outbox()
    assert pending.task == "miner.ingest" and pending.attempts == 1  # one refused try, recorded
    from ouroboros_gates.schemas.settings import Settings

    sweep = build_app(
        Settings(broker_url=redis_url, database_url=database, state=tmp_path / "s"), include=False
    )
    assert relay_outbox(store, publisher=sweep) == 1  # what beat's fleet.relay_outbox does
    assert [m["id"] for m in _queued(redis_url)] == [pending.message_id] and store.pending_outbox() == []
    store.close()

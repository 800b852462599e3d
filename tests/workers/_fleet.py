"""Helpers to run real ``celery worker`` processes against the test's Redis and PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ouroboros_gates.events import SqlEventStore, ensure_schema
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import build_app, declare_queues

ROOT = Path(__file__).resolve().parents[2]


class Fleet:
    """The environment of one test's fleet: its broker, event log, state dir and worker processes."""

    def __init__(self, tmp: Path, broker_url: str, database_url: str, **env: str) -> None:
        self.tmp = tmp
        self.env = {
            **os.environ,
            "OURO_BROKER_URL": broker_url,
            "OURO_DATABASE_URL": database_url,
            "OURO_STATE": str(tmp / "state"),
            "OURO_ROOTS": str(tmp),
            "OURO_VISIBILITY_TIMEOUT_S": "4",
            "OURO_RESTORE_INTERVAL_S": "1",
            "OURO_RETRY_BACKOFF_S": "0.2",
            "OURO_MAX_RETRIES": "2",
            **env,
        }
        settings = Settings(broker_url=broker_url, database_url=database_url, state=tmp / "state")
        self.sender = build_app(settings, include=False)
        declare_queues(self.sender)
        self.store = SqlEventStore.from_url(database_url)
        ensure_schema(self.store.engine)
        self.workers: list[subprocess.Popen[bytes]] = []

    def start_worker(
        self, queues: str = "fleet,miner", concurrency: int = 1, name: str = "w"
    ) -> subprocess.Popen[bytes]:
        """A real worker process, in its own process group so it can be killed whole."""
        log = (self.tmp / f"{name}-{len(self.workers)}.log").open("ab")
        argv = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "ouroboros_gates.workers.app",
            "worker",
            "-Q",
            queues,
            "-c",
            str(concurrency),
            "-n",
            f"{name}{len(self.workers)}@%h",
            "-l",
            "INFO",
            "--without-gossip",
            "--without-mingle",
        ]
        process = subprocess.Popen(
            argv, env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.workers.append(process)
        return process

    def send(self, task: str, payload: Any, queue: str = "fleet", task_id: str | None = None) -> None:
        """Publish a raw payload, as any producer (or a broken one) could."""
        self.sender.send_task(task, args=[payload], queue=queue, task_id=task_id)

    def events(self, type_name: str) -> list[Any]:
        """Every stored event of one type."""
        found, after = [], 0
        while chunk := self.store.read(after=after, limit=1000):
            found += [e for e in chunk if e.type == type_name]
            after = chunk[-1].position
        return found

    def logs(self) -> str:
        """Every worker's log, for failure messages."""
        return "\n".join(p.read_text(errors="replace")[-3000:] for p in sorted(self.tmp.glob("*.log")))

    def stop(self) -> None:
        """Stop every worker still running."""
        for process in self.workers:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.workers:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.store.engine.dispose()


def wait_for(
    check: Callable[[], Any], timeout: float, what: str, fleet: Fleet | Callable[[], str] | None = None
) -> Any:
    """Poll ``check`` until it returns something truthy; fail naming ``what`` (with the fleet's logs, or what
    ``fleet`` returns when it is a function)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    said = fleet.logs() if isinstance(fleet, Fleet) else fleet() if fleet else ""
    raise AssertionError(f"timed out after {timeout}s waiting for {what}\n{said}")

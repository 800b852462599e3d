"""``fleet.trigger`` on a real Celery worker (Redis broker, PostgreSQL log): what beat would send, end to
end."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ouroboros_gates.events import SqlEventStore, ensure_schema
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import build_app, declare_queues
from ouroboros_gates.workers.triggers import NOT_BUILT, PUBLISHED, lock_rows, locks

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


@pytest.fixture
def worker(tmp_path: Path, redis_url: str, pg_url: str) -> Iterator[tuple[Any, SqlEventStore, Path]]:
    """A real worker on the fleet and measurer queues; yields a sender app, the store and the state dir."""
    state = tmp_path / "state"
    env = {
        **os.environ,
        "OURO_BROKER_URL": redis_url,
        "OURO_DATABASE_URL": pg_url,
        "OURO_STATE": str(state),
        "OURO_ROOTS": str(tmp_path),
        "OURO_VISIBILITY_TIMEOUT_S": "30",
    }
    sender = build_app(Settings(broker_url=redis_url, database_url=pg_url, state=state), include=False)
    declare_queues(sender)
    store = SqlEventStore.from_url(pg_url)
    ensure_schema(store.engine)
    with store.engine.begin() as conn:
        conn.execute(locks.delete())
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "ouroboros_gates.workers.app",
                "worker",
                "-Q",
                "fleet,measurer",
                "-c",
                "2",
                "-n",
                "triggers@%h",
                "-l",
                "INFO",
                "--without-gossip",
                "--without-mingle",
            ],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield sender, store, log
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        store.engine.dispose()


def _wait(check: Callable[[], Any], what: str, log: Path, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}\n{log.read_text()[-3000:]}")


def test_fleet_trigger_publishes_measure_and_records_what_is_not_built(
    worker: tuple[Any, SqlEventStore, Path],
) -> None:
    sender, store, log = worker
    for name in ("detector", "precheck", "merge_train", "measure"):
        sender.send_task("fleet.trigger", args=[name], queue="fleet")

    def settled() -> dict[str, dict[str, Any]] | None:
        rows = lock_rows(store.side_tables)
        return rows if len(rows) == 4 and rows["measure"]["runs"] == 1 else None

    rows = _wait(settled, "all four triggers to fire", log)
    assert (rows["detector"]["not_built"], rows["detector"]["last_outcome"]) == (1, NOT_BUILT)
    assert (rows["merge_train"]["runs"], rows["merge_train"]["last_outcome"]) == (
        1,
        PUBLISHED,
    )  # a RunMergeTrain
    assert (rows["precheck"]["runs"], rows["precheck"]["last_outcome"]) == (1, PUBLISHED)  # a PrecheckSweep
    first = rows["measure"]["message_id"]
    assert rows["measure"]["last_outcome"] == PUBLISHED
    # The measure the trigger published runs on the measurer queue and writes the snapshot.
    _wait(lambda: store.is_handled("measurer.measure", first), "measurer.measure to handle the message", log)
    points = [e for e in store.read(limit=1000) if e.type == "SeriesPointRecorded"]
    assert points and {e.meta["message_id"] for e in points} == {first}
    assert (log.parent / "state" / "ouroboros.json").is_file()
    # Its run is over, so the next occurrence publishes a new message.
    sender.send_task("fleet.trigger", args=["measure"], queue="fleet")
    rows = _wait(
        lambda: (r := lock_rows(store.side_tables)) and r["measure"]["runs"] == 2 and r,
        "a second measure",
        log,
    )
    assert rows["measure"]["message_id"] != first

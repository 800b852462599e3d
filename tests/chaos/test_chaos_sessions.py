"""A PostgreSQL session dropped under a worker: the next message is retried, never failed and dropped."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _chaos import drop_pg_sessions
from _fleet import Fleet, wait_for

from ouroboros_gates.schemas import IngestRun, Probe, content_id

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.chaos]


@pytest.fixture
def fleet(tmp_path: Path, redis_url: str, pg_url: str) -> Iterator[Fleet]:
    running = Fleet(tmp_path, redis_url, pg_url, OURO_MAX_RETRIES="5", OURO_RETRY_BACKOFF_S="0.1")
    yield running
    running.stop()


def _probe(name: str) -> dict[str, object]:
    return Probe(message_id=content_id("sessions", name), probe=name).to_json_dict()


def _done(fleet: Fleet, name: str) -> bool:
    return any(e.payload["probe"] == name for e in fleet.events("ProbeCompleted"))


def test_messages_after_a_dropped_session_are_retried_not_lost(fleet: Fleet, pg_url: str) -> None:
    fleet.start_worker(concurrency=1)
    fleet.send("fleet.probe", _probe("warm"))  # the pool child now holds its writer and pool sessions
    wait_for(lambda: _done(fleet, "warm"), 60, "the first probe", fleet)
    assert drop_pg_sessions(pg_url) >= 1
    bad = _probe("bad")
    bad["hold_s"] = "soon"
    fleet.send("fleet.probe", bad)  # its rejection is the first write on the dropped session
    fleet.send("fleet.probe", _probe("after"))
    wait_for(lambda: _done(fleet, "after"), 60, "the probe after the drop", fleet)
    rejected = wait_for(lambda: fleet.events("MessageRejected"), 60, "the rejection after the drop", fleet)
    assert [e["field"] for e in rejected[0].payload["errors"]] == ["hold_s"]
    logs = "".join(path.read_text(errors="replace") for path in fleet.tmp.glob("*.log"))
    assert "retry" in logs  # the dropped session was met, and retried
    assert len([e for e in fleet.events("ProbeCompleted") if e.payload["probe"] == "after"]) == 1


def test_a_dead_letter_is_recorded_even_on_a_dropped_session(fleet: Fleet, pg_url: str) -> None:
    fleet.start_worker(concurrency=1)
    fleet.send("fleet.probe", _probe("warm-dl"))
    wait_for(lambda: _done(fleet, "warm-dl"), 60, "the first probe", fleet)
    assert drop_pg_sessions(pg_url) >= 1
    poison = IngestRun(message_id=content_id("sessions", "poison"), path="/etc/hostname", run="poison")
    fleet.send(poison.TASK, poison.to_json_dict(), queue="miner")  # parked, then recorded on a dead session
    recorded = wait_for(lambda: fleet.events("MessageDeadLettered"), 60, "the dead letter's record", fleet)
    assert [e.payload["message_id"] for e in recorded] == [poison.message_id]

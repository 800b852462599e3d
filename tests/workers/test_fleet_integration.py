"""The fleet on real Redis and PostgreSQL with real ``celery worker`` processes: kills, poison
messages, dead letters, the outbox, and duplicate deliveries."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from _fleet import Fleet, wait_for

from ouroboros_gates.schemas import IngestRun, Probe, content_id

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def fleet(tmp_path: Path, redis_url: str, pg_url: str) -> Iterator[Fleet]:
    running = Fleet(tmp_path, redis_url, pg_url)
    yield running
    running.stop()


def _probe(probe: str, hold_s: float = 0.0, chain: int = 0) -> dict[str, object]:
    return Probe(message_id=content_id("test", probe), probe=probe, hold_s=hold_s, chain=chain).to_json_dict()


def _completed(fleet: Fleet, probe: str) -> list[object]:
    return [e for e in fleet.events("ProbeCompleted") if e.payload["probe"] == probe]


def test_sigkill_of_the_whole_worker_mid_task_redelivers_and_appends_once(
    fleet: Fleet, redis_url: str
) -> None:
    first = fleet.start_worker()
    fleet.send("fleet.probe", _probe("kill-whole", hold_s=3))
    unacked = redis.Redis.from_url(redis_url)
    wait_for(lambda: unacked.hlen("unacked") > 0, 60, "the probe to be taken", fleet)
    os.killpg(first.pid, signal.SIGKILL)  # worker and pool child die mid-task, nothing acked
    first.wait()
    assert _completed(fleet, "kill-whole") == []
    fleet.start_worker()  # restores the unacked message after the visibility timeout
    wait_for(lambda: _completed(fleet, "kill-whole"), 90, "the redelivered probe", fleet)
    fleet.send("fleet.probe", _probe("after-kill"))
    wait_for(lambda: _completed(fleet, "after-kill"), 60, "a later probe", fleet)
    assert len(_completed(fleet, "kill-whole")) == 1


def test_sigkill_of_the_pool_child_requeues_and_appends_once(fleet: Fleet, redis_url: str) -> None:
    worker = fleet.start_worker(concurrency=1)
    fleet.send("fleet.probe", _probe("kill-child", hold_s=3))
    wait_for(lambda: redis.Redis.from_url(redis_url).hlen("unacked") > 0, 60, "the probe to be taken", fleet)
    children = wait_for(lambda: _children(worker.pid), 30, "the pool child", fleet)
    os.kill(children[0], signal.SIGKILL)  # reject_on_worker_lost puts the message back
    wait_for(lambda: _completed(fleet, "kill-child"), 90, "the requeued probe", fleet)
    fleet.send("fleet.probe", _probe("after-child"))
    wait_for(lambda: _completed(fleet, "after-child"), 60, "a later probe", fleet)
    assert len(_completed(fleet, "kill-child")) == 1


def test_malformed_message_is_rejected_naming_the_field_and_the_worker_keeps_serving(fleet: Fleet) -> None:
    fleet.start_worker()
    bad = _probe("bad")
    bad["hold_s"] = "soon"
    fleet.send("fleet.probe", bad)
    fleet.send("fleet.probe", {"message_id": "no-probe-field-01"})
    fleet.send("fleet.probe", ["not", "an", "object"])
    fleet.send("fleet.probe", _probe("good"))
    rejected = wait_for(
        lambda: len(fleet.events("MessageRejected")) >= 3 and fleet.events("MessageRejected"),
        60,
        "three rejections",
        fleet,
    )
    fields = sorted(error["field"] for event in rejected for error in event.payload["errors"])
    assert "hold_s" in fields and "probe" in fields
    wait_for(lambda: _completed(fleet, "good"), 60, "the good probe after the bad ones", fleet)
    fleet.send("fleet.probe", bad)  # the same poison again: recorded once
    fleet.send("fleet.probe", _probe("good-2"))
    wait_for(lambda: _completed(fleet, "good-2"), 60, "a probe after the repeat", fleet)
    assert len(fleet.events("MessageRejected")) == 3


def test_failing_message_goes_to_the_dead_letter_queue_and_is_recorded(fleet: Fleet, redis_url: str) -> None:
    fleet.start_worker(queues="miner")
    outside = IngestRun(message_id="ingest-outside-01", path="/etc/passwd", run="outside")
    missing = IngestRun(message_id="ingest-missing-01", path=str(fleet.tmp / "nope"), run="missing")
    for message in (outside, missing):
        fleet.send(message.TASK, message.to_json_dict(), queue="miner")
    dead = wait_for(
        lambda: len(fleet.events("MessageDeadLettered")) == 2 and fleet.events("MessageDeadLettered"),
        60,
        "two dead letters",
        fleet,
    )
    errors = {e.payload["message_id"]: e.payload["error"] for e in dead}
    assert "outside the configured roots" in errors["ingest-outside-01"]
    assert "no harness log to ingest" in errors["ingest-missing-01"]
    assert redis.Redis.from_url(redis_url).llen("dead_letter") == 2
    kept = {
        e.payload["message_id"]: e.payload["message"] for e in dead
    }  # what a retry from the ops page sends
    assert (
        kept["ingest-outside-01"] == outside.to_json_dict()
        and kept["ingest-missing-01"] == missing.to_json_dict()
    )


def test_outbox_follow_ups_are_published_after_commit(fleet: Fleet) -> None:
    fleet.start_worker()
    fleet.send("fleet.probe", _probe("chain", chain=2))
    wait_for(lambda: _completed(fleet, "chain+1+1"), 60, "the end of the chain", fleet)
    assert len(_completed(fleet, "chain")) == len(_completed(fleet, "chain+1")) == 1
    assert fleet.store.pending_outbox() == []


def test_a_message_delivered_twice_appends_once(fleet: Fleet) -> None:
    fleet.start_worker(concurrency=2)
    payload = _probe("twice")
    fleet.send("fleet.probe", payload)
    fleet.send("fleet.probe", payload)
    fleet.send("fleet.probe", _probe("marker"))
    wait_for(lambda: _completed(fleet, "twice") and _completed(fleet, "marker"), 60, "the probes", fleet)
    assert len(_completed(fleet, "twice")) == 1


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def test_a_task_past_its_time_limit_is_dead_lettered_once_and_the_worker_keeps_serving(
    tmp_path: Path, redis_url: str, pg_url: str
) -> None:
    limited = Fleet(tmp_path, redis_url, pg_url, OURO_TASK_TIME_LIMIT_S="1")
    try:
        limited.start_worker()
        limited.send("fleet.probe", _probe("too-slow", hold_s=60))
        limited.send("fleet.probe", _probe("after-slow"))
        dead = wait_for(
            lambda: limited.events("MessageDeadLettered"), 60, "the slow probe dead-lettered", limited
        )
        assert (
            dead[0].payload["error"]
            == "PermanentError: ran past the time limit of 1 s (OURO_TASK_TIME_LIMIT_S)"
        )
        assert dead[0].payload["attempts"] == 1  # not retried: it would hold a worker that long each time
        wait_for(lambda: _completed(limited, "after-slow"), 30, "the next probe on the same worker", limited)
        assert _completed(limited, "too-slow") == []
        assert redis.Redis.from_url(redis_url).llen("dead_letter") == 1
        assert limited.workers[0].poll() is None
    finally:
        limited.stop()

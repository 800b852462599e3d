"""A follow-up the broker loses after it was published is published again by the outbox sweep, once no
worker has recorded it for ``OURO_OUTBOX_REDELIVER_S``; one a worker recorded is never sent again."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _fleet import Fleet, wait_for

from ouroboros_gates.events import Metadata
from ouroboros_gates.schemas import Probe, ProbeCompleted, content_id
from ouroboros_gates.workers.shell import Outcome

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.chaos]


@pytest.fixture
def fleet(tmp_path: Path, redis_url: str, pg_url: str) -> Iterator[Fleet]:
    running = Fleet(tmp_path, redis_url, pg_url, OURO_OUTBOX_REDELIVER_S="1")
    yield running
    running.stop()


def _completed(fleet: Fleet, name: str) -> int:
    return len([e for e in fleet.events("ProbeCompleted") if e.payload["probe"] == name])


def test_a_published_follow_up_the_broker_lost_is_published_again(fleet: Fleet) -> None:
    cause = Probe(message_id=content_id("outbox", "cause"), probe="cause")
    lost = Probe(message_id=content_id("outbox", "lost"), probe="lost")
    outcome = Outcome.single(
        "probe/cause", ProbeCompleted(probe="cause", hostname="test", held_s=0), follow_ups=(lost,)
    )
    fleet.store.commit(outcome.writes, Metadata.for_message(cause.TASK, cause), outcome.follow_ups)
    (entry,) = fleet.store.pending_outbox()
    fleet.store.mark_published(entry.id)  # sent, as far as the outbox knows; the broker never had it
    fleet.start_worker()
    time.sleep(1.5)  # the entry is now older than OURO_OUTBOX_REDELIVER_S
    assert _completed(fleet, "lost") == 0
    fleet.sender.send_task("fleet.relay_outbox", queue="fleet")
    wait_for(lambda: _completed(fleet, "lost"), 60, "the lost follow-up, published again", fleet)
    time.sleep(1.5)  # recorded now: later sweeps leave it alone
    fleet.sender.send_task("fleet.relay_outbox", queue="fleet")
    fleet.send("fleet.probe", Probe(message_id=content_id("outbox", "marker"), probe="marker").to_json_dict())
    wait_for(lambda: _completed(fleet, "marker"), 60, "a later probe", fleet)
    assert _completed(fleet, "lost") == 1
    logs = "".join(path.read_text(errors="replace") for path in fleet.tmp.glob("*.log"))
    assert logs.count("publishing it again") == 1  # once lost, once sent again; never after it was recorded

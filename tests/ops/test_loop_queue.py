"""``ops.loop.queue.through_queue``, the one way a main-job step has its messages handled: what was handled
before is not sent again (and starts no worker), what a worker does not handle in time comes back with why,
and a step's results add up."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from ouroboros_gates.events import Metadata, open_store
from ouroboros_gates.ops.embedded import SharedFleet
from ouroboros_gates.ops.loop import Handled, through_queue
from ouroboros_gates.schemas import Measure, content_id
from ouroboros_gates.schemas.settings import Settings


def _measure(tag: str) -> Measure:
    return Measure(
        message_id=content_id("measure-test", tag), at=datetime(2026, 1, 2, tzinfo=UTC), tenant="default"
    )


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    for name in ("OURO_DATABASE_URL", "OURO_BROKER_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OURO_STATE", str(tmp_path / "state"))
    return Settings(state=tmp_path / "state")


def test_what_was_handled_before_is_not_sent_again_and_starts_no_worker(settings: Settings) -> None:
    store = open_store(settings.event_log_url)
    message = _measure("before")
    store.commit([], Metadata.for_message(message.TASK, message))
    assert store.is_handled(message.TASK, message.message_id)
    done = through_queue(store, settings, ["measurer"], publish=[message])
    assert done == Handled(before=(message.message_id,)) and done.ok
    assert not (settings.state_dir / "worker.out").exists()  # no worker was started for nothing


@pytest.mark.slow
def test_a_message_no_worker_takes_in_time_is_left_with_why(settings: Settings) -> None:
    store = open_store(settings.event_log_url)
    message = _measure("left")
    shared = SharedFleet(settings, ["merger"])  # a worker that does not consume the measurer's queue
    try:
        done = through_queue(store, settings, ["merger"], shared, publish=[message], timeout_s=0.5)
    finally:
        shared.close()
    assert not done.ok and done.handled == () and done.before == ()
    assert done.left == {message.message_id: "not handled within 0.5 s"}
    assert (settings.state_dir / "worker.out").exists()  # the worker was started for it


def test_results_add_up_in_order() -> None:
    first = Handled(handled=("a",), left={"b": "not handled within 1 s"})
    second = Handled(before=("c",), left={"d": "not handled within 2 s"})
    total = first + second
    assert total == Handled(("a",), ("c",), {"b": "not handled within 1 s", "d": "not handled within 2 s"})
    assert list(total.left) == ["b", "d"] and not total.ok and (Handled() + Handled(("x",))).ok

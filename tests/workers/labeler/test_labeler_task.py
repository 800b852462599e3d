"""The ``labeler.label`` task: registered, routed to the gpu queue, and its handler's events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ouroboros_gates.events import SqlEventStore, ensure_schema
from ouroboros_gates.schemas import CorpusKind, LabelRequest, LabelTicket
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.app import app, queue_for
from ouroboros_gates.workers.labeler import tasks
from ouroboros_gates.workers.shell import Context

ROOT = Path(__file__).resolve().parents[3]


def _context(tmp_path: Path, **settings: Any) -> Context:
    state = tmp_path / "state"
    run = state / "3e7b1f5d-9c2a-4d84-a6f3-8b0e5d2c7a41"
    run.mkdir(parents=True)
    (run / "events.jsonl").write_bytes((ROOT / "examples" / "runs" / run.name / "events.jsonl").read_bytes())
    config = Settings(
        state=state, forge=str(ROOT / "examples"), docker_socket=None, labeler_candidates=4, **settings
    )
    store = SqlEventStore.from_url(config.event_log_url)
    ensure_schema(store.engine)
    return Context(config, store, "test/1")


def test_the_task_is_registered_on_the_gpu_queue() -> None:
    assert "labeler.label" in app.tasks and queue_for("labeler.label") == "gpu"
    assert tasks.label.message_type is LabelTicket


def test_the_handler_labels_one_ticket_from_its_queued_request(tmp_path: Path, model_server: Any) -> None:
    ctx = _context(tmp_path, model="fake-model", model_api="ollama", model_url=model_server.url)
    answer = {"candidate": 1, "label": "+", "quote": "nowhere on the line", "reason": "r", "line": 1}
    model_server.script([{"content": {"labels": [answer]}}])
    request = LabelRequest(
        ticket=44, miner="sleep-poll", corpus=(CorpusKind.JSONL,), at="2026-10-03T09:00:00Z"
    )
    outcome = tasks.label.handler(LabelTicket(message_id="label-44-test", ticket=44, request=request), ctx)
    streams = {write.stream: [event.TYPE for event in write.events] for write in outcome.writes}
    assert streams == {"ticket/44": ["LabelProposed"], "labeler": ["LabelerRunCompleted"]}
    label = outcome.writes[0].events[0].label
    # The row's miner is kept: sleep-poll is registered, so it is the one asked, and its facts say no.
    assert label.acceptance.value == "ACCEPTANCE_REJECTED" and "miner sleep-poll" in label.why
    assert label.instance == "3e7b1f5d-9c2a-4d84-a6f3-8b0e5d2c7a41"


def test_with_no_model_the_handler_records_a_queued_run(tmp_path: Path) -> None:
    outcome = tasks.label.handler(LabelTicket(message_id="label-48-test", ticket=48), _context(tmp_path))
    (write,) = outcome.writes
    record = write.events[0].labeler_run
    assert write.stream == "labeler" and record.model == "none" and "stay queued" in record.notes[-1]

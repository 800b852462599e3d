"""prechecker.sweep and prechecker.precheck on a real worker (the embedded broker): verdicts and label
requests land in the ledger, a second sweep appends nothing, and no model is called even when one is set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from ouroboros_gates.events import SqlEventStore, ensure_schema
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projections.labels import label_requests
from ouroboros_gates.events.projections.proposals import proposals, verdicts
from ouroboros_gates.events.projector import catch_up
from ouroboros_gates.events.tables import outbox
from ouroboros_gates.ops.embedded import EmbeddedFleet, wait_handled
from ouroboros_gates.schemas import PrecheckSweep
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import build_app, declare_queues, publish
from ouroboros_gates.workers.prechecker import precheck_message

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
MINING = (38, 41, 44, 47, 48, 50, 53)
pytestmark = pytest.mark.slow


def _sweep(store: SqlEventStore, settings: Settings, sender: Any, fleet: EmbeddedFleet, key: str) -> None:
    sweep = PrecheckSweep(message_id=key)
    publish(sweep, via=sender)
    pending = {sweep.message_id: sweep.TASK}
    pending |= {
        precheck_message(n, sweep.message_id, sweep).message_id: "prechecker.precheck" for n in MINING
    }
    left = wait_handled(store, pending, fleet, timeout_s=120)
    assert not left, (fleet.log_path.read_text()[-3000:], left)


def test_a_sweep_prechecks_every_mining_ticket_once_and_calls_no_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model_server: Any
) -> None:
    for key, value in {
        "OURO_FORGE": str(EXAMPLES),
        "OURO_ROOTS": str(EXAMPLES),
        "OURO_MODEL": "fake-model",
        "OURO_MODEL_URL": f"{model_server.url}/v1",
        "OURO_MODEL_API": "openai",
    }.items():
        monkeypatch.setenv(key, value)
    settings = Settings(state=tmp_path / "state")
    store = SqlEventStore.from_url(settings.event_log_url)
    ensure_schema(store.engine)
    sender = build_app(settings, include=False)
    declare_queues(sender)
    with EmbeddedFleet(settings, queues=["prechecker"]) as fleet:
        _sweep(store, settings, sender, fleet, "sweep-0001")
        head = store.head()
        _sweep(store, settings, sender, fleet, "sweep-0002")
        assert store.head() == head  # the same answers: nothing new
    catch_up(store, PROJECTIONS)
    with store.reading() as conn:
        rows = {r["ticket"]: r for r in conn.execute(select(verdicts)).mappings()}
        queued = {r["ticket"]: r for r in conn.execute(select(label_requests)).mappings()}
        posted = {r["ticket"] for r in conn.execute(select(proposals)).mappings()}
        sent = conn.execute(select(outbox.c.task, outbox.c.payload)).all()
    assert {n: rows[n]["verdict"] for n in MINING} == {
        38: "launch",
        41: "launch",
        44: "needs_labels",
        47: "needs_labels",
        48: "needs_labels",
        50: "launch",
        53: "launch",
    }
    assert set(queued) == {44, 47, 48} and queued[47]["instances"] == ["#47"]
    assert posted == set(MINING) - {48}  # the malformed proposal is no proposal
    # one LabelTicket per needs_labels verdict went through the outbox, to the labeler's queue
    assert sorted(payload["ticket"] for task, payload in sent if task == "labeler.label") == [44, 47, 48]
    assert model_server.requests == []

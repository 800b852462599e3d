"""``GET /metrics``: each metric against what the broker and the event log actually hold."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from _ops_seed import Seeded, seed
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from ouroboros_gates.events import Metadata, StreamWrite
from ouroboros_gates.ops.api import create_app
from ouroboros_gates.ops.denials import denials_in
from ouroboros_gates.schemas import FieldError, MessageDeadLettered, MessageRejected, Probe
from ouroboros_gates.schemas.errors import ConfigurationError
from ouroboros_gates.schemas.settings import Settings, load_settings
from ouroboros_gates.workers import build_app, declare_queues
from ouroboros_gates.workers.triggers import fire

LOCAL = "http://127.0.0.1"  # the API answers only the hosts it trusts

CAP_KEY = "OURO_FIXER_DAILY_CAP_USD"
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _scrape(settings: Settings) -> Samples:
    response = TestClient(create_app(settings, catch_up_every_s=None), base_url=LOCAL).get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def _on(seeded: Seeded, broker_url: str) -> Settings:
    return Settings(state=seeded.settings.state, broker_url=broker_url)


@pytest.mark.parametrize(("raw", "cap"), [(None, 0.0), ("12.5", 12.5), ("0", 0.0)])
def test_the_cap_defaults_to_zero_fixers_off(
    raw: str | None, cap: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    if raw is not None:
        monkeypatch.setenv(CAP_KEY, raw)
    assert load_settings().fixer_daily_cap_usd == cap


@pytest.mark.parametrize("raw", ["-1", "ten", "nan", "inf"])
def test_a_bad_cap_names_its_key(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CAP_KEY, raw)
    with pytest.raises(ConfigurationError, match=CAP_KEY):
        load_settings()


def test_queue_depths_come_from_the_broker(tmp_path: Path, redis_url: str) -> None:
    seeded = seed(tmp_path)
    settings = _on(seeded, redis_url)
    sender = build_app(settings, include=False)
    declare_queues(sender)
    for n in range(3):
        sender.send_task("miner.ingest", args=[{}], queue="miner", task_id=f"metrics-depth-{n}")
    samples = _scrape(settings)
    assert samples[("ouro_broker_up", ())] == 1.0
    assert samples[("ouro_queue_depth", (("queue", "miner"),))] == 3.0
    assert samples[("ouro_queue_depth", (("queue", "dead_letter"),))] == 0.0


def test_a_broker_down_is_said_not_guessed(tmp_path: Path) -> None:
    samples = _scrape(_on(seed(tmp_path), "redis://127.0.0.1:9/0"))
    assert samples[("ouro_broker_up", ())] == 0.0
    assert not [key for key in samples if key[0] == "ouro_queue_depth"]


def test_log_metrics_outcomes_latency_spend_and_triggers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded = seed(tmp_path)
    store = seeded.store
    # A follow-up probe through the outbox, handled; a rejection; a dead letter.
    probe = Probe(message_id="metrics-probe-1", probe="p")
    store.commit([], Metadata(producer="test.cause", message_id="metrics-cause-1"), outbox=[probe])
    store.commit([], Metadata(producer="fleet.probe", message_id=probe.message_id))
    rejected = MessageRejected(
        task="miner.ingest", errors=(FieldError(field="run", message="Field required"),)
    )
    store.commit(
        [StreamWrite("fleet/rejected", [rejected])], Metadata("miner.ingest:rejected", "metrics-rej-1")
    )
    dead = MessageDeadLettered(
        task="miner.ingest", message_id="metrics-dl-1", attempts=3, error_type="E", error="e"
    )
    store.commit([StreamWrite("fleet/dead-letter", [dead])], Metadata("fleet.dead_letter", "metrics-dl-1"))
    store.commit(
        [],
        Metadata(producer="test.cause", message_id="metrics-cause-2"),
        outbox=[Probe(message_id="metrics-probe-2", probe="q")],
    )
    at = datetime.now(UTC) - timedelta(minutes=1)
    fire("measure", store.side_tables, registered={"measurer.measure"}, publish=lambda _: None, now=at)
    fire("measure", store.side_tables, registered={"measurer.measure"}, publish=lambda _: None, now=at)
    fire("detector", store.side_tables, registered=set(), publish=lambda _: None, now=at)
    monkeypatch.setenv(CAP_KEY, "20")

    samples = _scrape(_on(seeded, "memory://"))
    outcome = lambda task, kind: samples[("ouro_task_outcomes_total", (("outcome", kind), ("task", task)))]  # noqa: E731
    assert (outcome("fleet.probe", "handled"), outcome("miner.ingest", "rejected")) == (1.0, 1.0)
    assert outcome("miner.ingest", "dead_lettered") == 2.0  # the seed's and this one
    assert (
        "ouro_task_outcomes_total",
        (("outcome", "handled"), ("task", "fleet.dead_letter")),
    ) not in samples
    assert samples[("ouro_task_latency_seconds_count", (("task", "fleet.probe"),))] == 1.0
    assert samples[("ouro_task_latency_seconds_bucket", (("le", "+Inf"), ("task", "fleet.probe")))] == 1.0
    assert samples[("ouro_outbox_pending", ())] == 2.0  # neither probe was relayed to the broker
    assert samples[("ouro_event_log_head", ())] == store.head()
    assert (
        samples[("ouro_projection_lag_events", (("projection", "faults"),))] == 2.0
    )  # the two not yet folded
    assert samples[("ouro_fixer_spend_usd_today", ())] == 1.25
    assert samples[("ouro_fixer_daily_cap_usd", ())] == 20.0

    def trigger(name: str, kind: str) -> float:
        return samples[("ouro_trigger_occurrences_total", (("outcome", kind), ("trigger", name)))]

    assert (trigger("measure", "published"), trigger("measure", "skipped_running")) == (1.0, 1.0)
    assert trigger("detector", "skipped_not_built") == 1.0


def test_decisions_findings_denials_and_the_snapshots_figures(tmp_path: Path) -> None:
    from ouroboros_gates.ops.gate.record import append_line, envelope

    seeded = seed(tmp_path)
    # Two refusals the hook wrote into a recorded run, one naming two gates; an allowed call is not one.
    for gates, decision in (
        (["draft-pr-late"], "deny"),
        (["draft-pr-late", "self-match"], "deny"),
        ([], "allow"),
    ):
        payload = {
            "hook_event_name": "OuroborosGate",
            "session_id": "s",
            "decision": decision,
            "gates": gates,
        }
        append_line(str(seeded.run_file), envelope(payload, event_type="gate"))
    samples = _scrape(_on(seeded, "memory://"))
    point = lambda name: samples[("ouro_decisions", (("operating_point", name),))]  # noqa: E731
    assert (point("block"), point("advisory"), point("drop")) == (1.0, 2.0, 1.0)
    assert samples[("ouro_decisions_dismissed", ())] == 0.0
    found = lambda scope: samples[("ouro_findings", (("miner", "draft-pr-late"), ("scope", scope)))]  # noqa: E731
    assert (found("generic"), found("tenant")) == (2.0, 2.0)  # every tenant's, as the ledger holds them
    denials = lambda miner: samples[("ouro_gate_denials_total", (("miner", miner),))]  # noqa: E731
    assert (denials("draft-pr-late"), denials("self-match")) == (2.0, 1.0)

    snapshot = json.loads((seeded.settings.state_dir / "ouroboros.json").read_text())
    weekly = snapshot["series"]["ouroboros.struggle_rate_per_1k_tool_calls_weekly"]
    latest = max(weekly, key=lambda p: p["at"])["value"]
    assert samples[("ouro_struggle_rate_per_1k_tool_calls", (("period", "week"),))] == pytest.approx(latest)
    week = snapshot["series"]["ouroboros.compounding_per_week"][0]
    for bound in ("value", "low", "high"):
        assert samples[("ouro_compounding", (("bound", bound), ("period", "week")))] == pytest.approx(
            week[bound]
        )
    assert samples[("ouro_h_fleet_offenders", ())] == len(snapshot["h_fleet"]["offenders"])
    assert (("ouro_h_fleet", ()) in samples) == (snapshot["h_fleet"]["value"] is not None)


def test_without_a_snapshot_its_figures_are_absent_not_zero(tmp_path: Path) -> None:
    seeded = seed(tmp_path)
    (seeded.settings.state_dir / "ouroboros.json").write_text("{not json")
    samples = _scrape(_on(seeded, "memory://"))
    assert not [
        key for key in samples if key[0].startswith(("ouro_struggle", "ouro_compounding", "ouro_h_fleet"))
    ]


def test_a_gate_line_whose_event_or_gates_are_not_what_a_denial_writes_is_read_without_failing() -> None:
    lines = [
        b'{"hook_event_name":"OuroborosGate","event":["deny"]}',
        b'{"hook_event_name":"OuroborosGate","event":"deny"}',
        b'{"hook_event_name":"OuroborosGate","event":{"decision":"deny","gates":"self-match"}}',
        b'{"hook_event_name":"OuroborosGate","event":{"decision":"deny","gates":["self-match"]}}',
    ]
    assert denials_in(b"\n".join(lines)) == {"self-match": 2}

"""The operator's reads and actions through the API: decisions, labels and dead letters as the ledger holds
them, and each action behind the token, recorded as an event, folded into the ledger, and idempotent."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _ops_seed import DEAD_KEPT, DEAD_OLD, FLOW, PIN, Seeded, seed
from fastapi.testclient import TestClient

from ouroboros_gates.events import Metadata, SqlEventStore, StreamWrite
from ouroboros_gates.events.recorded import recorded_labels
from ouroboros_gates.miners import backtest, corpus_items, extract_facts, find_miner, read_labels
from ouroboros_gates.ops.api import create_app
from ouroboros_gates.ops.status import queue_depths
from ouroboros_gates.schemas import (
    Acceptance,
    IngestRun,
    LabelProposed,
    LabelRequest,
    LabelRequested,
    ProposedLabel,
    Span,
)
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import build_app
from ouroboros_gates.workers.miner.ingest import ingest_run

LOCAL = "http://127.0.0.1"
TOKEN = {"Authorization": "Bearer tok"}
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "miners" / "_template" / "fixtures"


def _client(seeded: Seeded, **settings: Any) -> TestClient:
    merged = {"state": seeded.settings.state, "api_token": "tok", "broker_url": "memory://", **settings}
    return TestClient(create_app(Settings(**merged), catch_up_every_s=None), base_url=LOCAL)


@pytest.fixture
def seeded(tmp_path: Path) -> Seeded:
    return seed(tmp_path)


def _types(store: SqlEventStore, kind: str) -> list[dict[str, Any]]:
    return [e.payload for e in store.read(limit=10_000) if e.type == kind]


def test_decisions_filter_by_repository_and_operating_point(seeded: Seeded) -> None:
    client = _client(seeded)
    every = client.get("/api/decisions").json()
    assert every["total"] == 4 and every["repos"] == ["acme/shop", "acme/web"]
    assert every["counts"] == {"block": 1, "advisory": 2, "drop": 1}
    shop = client.get("/api/decisions", params={"repo": "acme/shop"}).json()
    assert {r["function"] for r in shop["rows"]} == {"checkout", "search", "health"}
    assert shop["counts"] == {"block": 1, "advisory": 1, "drop": 1}
    block = client.get("/api/decisions", params={"repo": "acme/shop", "operating_point": "block"}).json()[
        "rows"
    ]
    assert [(r["function"], r["operating_point"], r["flows"]) for r in block] == [
        ("checkout", "block", [FLOW])
    ]
    assert "unsanitised" in block[0]["rationale"] and block[0]["dismissed"] is None
    paged = client.get("/api/decisions", params={"limit": 3}).json()
    assert len(paged["rows"]) == 3 and paged["next_offset"] == 3
    assert client.get("/api/decisions", params={"operating_point": "maybe"}).status_code == 400


def test_dismissing_a_decision_is_an_event_the_ledger_shows_once(seeded: Seeded) -> None:
    client = _client(seeded)
    body = {
        "candidate": {
            "repo": "acme/shop",
            "pin": PIN,
            "path": "app/views.py",
            "function": "checkout",
            "family": "injection",
        },
        "note": "the input is an enum",
    }
    assert client.post("/api/actions/decisions/dismiss", json=body).status_code == 401
    first = client.post("/api/actions/decisions/dismiss", json=body, headers=TOKEN)
    assert first.status_code == 200 and first.json()["position"] > 0
    shown = client.get("/api/decisions", params={"operating_point": "block"}).json()["rows"][0]
    assert shown["dismissed"]["note"] == "the input is an enum"
    assert shown["dismissed"]["position"] == first.json()["position"]
    again = client.post("/api/actions/decisions/dismiss", json=body, headers=TOKEN)
    assert again.status_code == 200 and again.json()["position"] is None  # a double click appends nothing
    assert [e["note"] for e in _types(seeded.store, "DecisionDismissed")] == ["the input is an enum"]
    body["candidate"]["function"] = "nowhere"
    missing = client.post("/api/actions/decisions/dismiss", json=body, headers=TOKEN)
    assert missing.status_code == 404 and "no decision on" in missing.json()["detail"]


def test_reviewing_a_label_changes_the_labels_a_backtest_reads(seeded: Seeded) -> None:
    client = _client(seeded)
    rows = client.get("/api/labels", params={"ticket": 71}).json()["rows"]
    assert [(r["instance"], r["acceptance"], r["review"]) for r in rows] == [
        ("run-w5d4", "ACCEPTANCE_ACCEPTED", None),
        ("run-w5d2", "ACCEPTANCE_REJECTED", None),
    ]
    kept, refused = rows[0]["position"], rows[1]["position"]
    assert {x.instance for x in recorded_labels(seeded.store, "draft-pr-late")} == {"run-w5d4"}

    path = f"/api/actions/labels/{kept}/review"
    assert client.post(path, json={"review": "rejected"}).status_code == 401
    rejected = client.post(
        path, json={"review": "rejected", "note": "a brief, not an offense"}, headers=TOKEN
    )
    assert rejected.status_code == 200 and rejected.json()["position"] > 0
    accepted = client.post(
        f"/api/actions/labels/{refused}/review", json={"review": "accepted"}, headers=TOKEN
    )
    assert accepted.status_code == 200
    assert {x.instance for x in recorded_labels(seeded.store, "draft-pr-late")} == {"run-w5d2"}
    after = {r["position"]: r["review"] for r in client.get("/api/labels").json()["rows"]}
    assert after[kept]["review"] == "rejected" and after[kept]["note"] == "a brief, not an offense"
    same = client.post(path, json={"review": "rejected"}, headers=TOKEN)
    assert same.json()["position"] is None  # already so: nothing appended
    changed = client.post(path, json={"review": "accepted"}, headers=TOKEN)
    assert changed.json()["position"] > rejected.json()["position"]
    assert len(_types(seeded.store, "LabelReviewed")) == 3
    assert (
        client.post("/api/actions/labels/1/review", json={"review": "accepted"}, headers=TOKEN).status_code
        == 404
    )
    assert client.post(path, json={"review": "maybe"}, headers=TOKEN).status_code == 400


def test_a_kept_dead_letter_is_sent_again_through_the_outbox_to_the_broker(
    seeded: Seeded, redis_url: str
) -> None:
    client = _client(seeded, broker_url=redis_url)
    listed = {r["message_id"]: r for r in client.get("/api/dead_letters").json()["rows"]}
    assert listed[DEAD_KEPT]["retryable"] and not listed[DEAD_OLD]["retryable"]
    assert listed[DEAD_KEPT]["error"] == "database is locked" and listed[DEAD_KEPT]["retry"] is None

    path = f"/api/actions/dead_letters/{DEAD_KEPT}/retry"
    assert client.post(path, json={}).status_code == 401
    first = client.post(path, json={"note": "the lock is gone"}, headers=TOKEN).json()
    assert first["attempt"] == 1 and first["published"] is True and first["retry_message_id"] != DEAD_KEPT
    depths, error = queue_depths(build_app(seeded.settings.model_copy(update={"broker_url": redis_url})))
    assert error is None and depths["miner"] == 1  # on the queue a worker takes it from
    queued = seeded.store.pending_outbox(100)
    assert queued == []  # published, so not pending
    sent = IngestRun.model_validate(_outbox_payload(seeded.store, first["retry_message_id"]))
    assert (sent.run, sent.causation_id) == ("run-w5d4", DEAD_KEPT)
    second = client.post(path, json={}, headers=TOKEN).json()
    assert second["attempt"] == 2 and second["retry_message_id"] != first["retry_message_id"]
    shown = {r["message_id"]: r for r in client.get("/api/dead_letters").json()["rows"]}[DEAD_KEPT]
    assert shown["retry"]["attempt"] == 2
    old = client.post(f"/api/actions/dead_letters/{DEAD_OLD}/retry", json={}, headers=TOKEN)
    assert old.status_code == 409 and "not kept" in old.json()["detail"]
    assert (
        client.post("/api/actions/dead_letters/nothing-here/retry", json={}, headers=TOKEN).status_code == 404
    )


def _outbox_payload(store: SqlEventStore, message_id: str) -> dict[str, Any]:
    from sqlalchemy import select

    from ouroboros_gates.events import tables as t

    with store.reading() as conn:
        return dict(
            conn.execute(select(t.outbox.c.payload).where(t.outbox.c.message_id == message_id)).scalar_one()
        )


def _template_log(seeded: Seeded) -> None:
    """The template's three fixture runs recorded, and its labels proposed for a ticket naming the miner."""
    store = seeded.store
    settings = Settings(state=seeded.settings.state, roots=str(ROOT))
    truth = {row.instance: row.positive for row in read_labels(FIXTURES / "labels.tsv").rows}
    for run in sorted(truth):
        recorded = ingest_run(IngestRun(message_id=f"i-{run}", path=str(FIXTURES / run), run=run), settings)
        store.commit([StreamWrite(f"run/{run}", [recorded])], Metadata("test", message_id=f"i-{run}"))
    request = LabelRequest(ticket=7, miner="draft-pr-late", instances=tuple(truth), at=datetime.now(UTC))
    store.commit([StreamWrite("ticket/7", [LabelRequested(request=request)])], Metadata("test", "request-7"))
    for run, positive in truth.items():
        span = Span(file=str(FIXTURES / run / "events.jsonl"), line=1)
        label = ProposedLabel(
            ticket=7,
            instance=run,
            positive=positive,
            quote="gh pr create --draft",
            span=span,
            acceptance=Acceptance.ACCEPTED if positive else Acceptance.UNCHECKED,
        )
        store.commit(
            [StreamWrite("ticket/7", [LabelProposed(label=label)])], Metadata("test", f"label-{run}")
        )


def test_a_backtest_replayed_as_of_a_time_sees_the_log_as_it_stood(seeded: Seeded) -> None:
    before_labels = datetime.now(UTC)
    time.sleep(0.05)
    _template_log(seeded)
    client = _client(seeded)
    path = "/api/actions/miners/draft-pr-late/replay"
    assert client.post(path, json={"as_of": datetime.now(UTC).isoformat()}).status_code == 401
    seeded_label = client.get("/api/labels", params={"ticket": 71}).json()["rows"][0]["position"]
    rejected = client.post(
        f"/api/actions/labels/{seeded_label}/review", json={"review": "rejected"}, headers=TOKEN
    )
    assert (
        rejected.status_code == 200
    )  # the seed's own label on run-w5d4 leaves the replay: the fixtures' alone

    now = client.post(path, json={"as_of": datetime.now(UTC).isoformat()}, headers=TOKEN).json()
    miner = find_miner("draft-pr-late")
    labels = read_labels(FIXTURES / "labels.tsv")
    expected = backtest(
        miner.name, miner.rules(), miner.verdicts, labels, extract_facts(miner, corpus_items([FIXTURES]))
    )
    replay = now["replay"]
    assert now["position"] > 0 and replay["error"] is None and replay["labels"] == 3
    for key in ("kappa_star", "fit", "judged", "tp", "fp", "fn"):
        assert replay["backtest"][key] == expected.record().to_json_dict()[key], key

    # As of before the fixtures' labels (and before the review), the seed's label on run-w5d4 alone stood.
    early = client.post(path, json={"as_of": before_labels.isoformat()}, headers=TOKEN).json()["replay"]
    assert early["labels"] == 1 and early["backtest"]["judged"] + early["backtest"]["fit"] == ["run-w5d4"]
    ancient = client.post(path, json={"as_of": "2020-01-01T00:00:00Z"}, headers=TOKEN).json()["replay"]
    assert ancient["backtest"] is None and "no labels recorded for draft-pr-late" in ancient["error"]
    rows = client.get("/api/ledger/backtest_replays", params={"miner": "draft-pr-late"}).json()["rows"]
    assert [(r["labels"], r["error"] is None) for r in rows] == [(3, True), (1, True), (0, False)]

    future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    later = client.post(path, json={"as_of": future}, headers=TOKEN).json()["replay"]
    assert (
        datetime.fromisoformat(later["as_of"]) <= datetime.now(UTC) and later["labels"] == 3
    )  # a later time is now
    assert client.post(path, json={"as_of": future, "extra": 1}, headers=TOKEN).status_code == 400
    assert (
        client.post(path, json={"as_of": "2026-10-04T09:00:00"}, headers=TOKEN).status_code == 400
    )  # no zone
    unknown = client.post("/api/actions/miners/no-such/replay", json={"as_of": future}, headers=TOKEN)
    assert unknown.status_code in (400, 404)
    missing = client.post(
        "/api/actions/miners/no-such/replay", json={"as_of": "2020-01-01T00:00:00Z"}, headers=TOKEN
    )
    assert missing.status_code == 404 and "no miner named" in missing.json()["detail"]


def test_findings_filter_sort_and_page_in_the_database(seeded: Seeded) -> None:
    client = _client(seeded)
    every = client.get("/api/findings").json()
    assert every["total"] == 3 and every["facets"]["scope"] == ["generic", "tenant"]
    generic = client.get("/api/findings", params={"scope": "generic"}).json()
    assert generic["total"] == 2 and {r["scope"] for r in generic["rows"]} == {"generic"}
    by_run = client.get("/api/findings", params={"sort": "run", "order": "desc"}).json()["rows"]
    assert [r["run"] for r in by_run] == sorted((r["run"] for r in by_run), reverse=True)
    pages = [
        client.get("/api/findings", params={"sort": "run", "limit": 1, "offset": n}).json() for n in range(3)
    ]
    assert [p["rows"][0]["run"] for p in pages] == sorted(r["run"] for r in by_run)
    assert [p["next_offset"] for p in pages] == [1, 2, None]
    assert client.get("/api/findings", params={"q": "w5d4"}).json()["total"] == 1
    assert client.get("/api/findings", params={"q": "%"}).json()["total"] == 0  # a wildcard is a character
    assert client.get("/api/findings", params={"sort": "nope"}).status_code == 400

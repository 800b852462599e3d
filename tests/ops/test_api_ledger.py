"""The API's reads on a seeded log: findings with proofs and tenancy, backtests, ledger tables, snapshot,
labeler, spend, and the ops page's files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _ops_seed import REFUSAL, Seeded, seed
from fastapi.testclient import TestClient

from ouroboros_gates.ops.api import LEDGER, create_app
from ouroboros_gates.schemas.settings import Settings

LOCAL = "http://127.0.0.1"  # the API answers only the hosts it trusts


@pytest.fixture
def seeded(tmp_path: Path) -> Seeded:
    return seed(tmp_path)


def _client(settings: Settings) -> TestClient:
    return TestClient(create_app(settings, catch_up_every_s=None), base_url=LOCAL)


def _as(seeded: Seeded, tenant: str) -> TestClient:
    return _client(Settings(state=seeded.settings.state, tenant=tenant, broker_url="memory://"))


def _all(client: TestClient, path: str, **params: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    after = 0
    while True:
        page = client.get(path, params={**params, "after": after}).json()
        rows += page["rows"]
        if page["next"] is None:
            return rows
        after = page["next"]


def test_findings_carry_their_proof_with_spans_and_source_lines(seeded: Seeded) -> None:
    found = _client(seeded.settings).get("/api/findings").json()["rows"]
    own = next(f for f in found if f["run"] == "run-w5d4")
    assert own["subject"] == [{"text": "run-w5d4"}] and own["severity"] == "SEVERITY_S3"
    gated, score, knee = own["proof"]
    assert gated["text"] == 'gated("run-w5d4")' and gated["where"] == f"{seeded.run_file}:1"
    assert '"session_start"' in gated["source"]
    assert score["text"] == 'score("run-w5d4", 1259)' and '"draft_pr"' in score["source"]
    assert knee == {**knee, "text": "knee(468)", "where": None, "source": None}


def test_a_tenants_findings_never_reach_another_tenant(seeded: Seeded) -> None:
    mine = _client(seeded.settings).get("/api/findings").json()["rows"]
    assert sorted((f["tenant"], f["rule"], f["scope"]) for f in mine) == [
        ("acme", "shared", "generic"),
        ("default", "invisible", "generic"),
        ("default", "invisible", "tenant"),
    ]
    foreign = next(f for f in mine if f["tenant"] == "acme")
    assert foreign["proof"][0]["where"] == "events.jsonl:1" and foreign["proof"][0]["source"] is None
    only_acme = _client(seeded.settings).get("/api/findings", params={"tenant": "acme"}).json()["rows"]
    assert [f["rule"] for f in only_acme] == ["shared"]  # the filter narrows; it never widens
    theirs = _as(seeded, "acme").get("/api/findings").json()["rows"]
    assert sorted((f["tenant"], f["rule"]) for f in theirs) == [
        ("acme", "secret"),
        ("acme", "shared"),
        ("default", "invisible"),
    ]
    assert next(f for f in theirs if f["tenant"] == "default")["scope"] == "generic"


def test_findings_page_by_position(seeded: Seeded) -> None:
    client = _client(seeded.settings)
    first = client.get("/api/findings", params={"limit": 1}).json()
    assert len(first["rows"]) == 1 and first["next"] == first["rows"][0]["position"]
    paged = _all(client, "/api/findings", limit=1)
    assert [f["position"] for f in paged] == [
        f["position"] for f in client.get("/api/findings").json()["rows"]
    ]


def test_events_show_only_the_servers_tenant(seeded: Seeded) -> None:
    shown = _client(seeded.settings).get("/api/events", params={"limit": 1000}).json()
    runs = {e["payload"]["run"] for e in shown if e["type"] == "FindingDerived"}
    assert runs == {"run-w5d4", "run-w5d2"}  # acme's findings, its generic one included, are acme's events


def test_backtests_come_from_acceptances(seeded: Seeded) -> None:
    rows = _client(seeded.settings).get("/api/backtests").json()["rows"]
    assert [(r["miner"], r["backtest"]["fn"], r["backtest"]["kappa_star"]) for r in rows] == [
        ("draft-pr-late", 0, 468.0)
    ]
    assert {r["miner"] for r in _as(seeded, "acme").get("/api/backtests").json()["rows"]} == {
        "draft-pr-late",
        "acme-only",
    }
    assert _client(Settings(state=seeded.settings.state / "empty", broker_url="memory://")).get(
        "/api/backtests"
    ).json() == {"rows": [], "next": None}


@pytest.mark.parametrize("table", sorted(LEDGER))
def test_every_ledger_table_reads(seeded: Seeded, table: str) -> None:
    page = _client(seeded.settings).get(f"/api/ledger/{table}").json()
    assert page["table"] == table and isinstance(page["rows"], list)


def test_ledger_tables_filter_order_and_refuse_what_they_do_not_know(seeded: Seeded) -> None:
    client = _client(seeded.settings)
    merges = client.get("/api/ledger/merges", params={"order": "desc"}).json()["rows"]
    assert [(m["pull_request"], m["outcome"]) for m in merges] == [(1106, "merged"), (1105, "refused")]
    assert merges[1]["refusal"] == [REFUSAL]
    weekly = _all(
        client, "/api/ledger/series_points", series="ouroboros.struggle_rate_per_1k_tool_calls_weekly"
    )
    assert len(weekly) == 6 and {p["series"] for p in weekly} == {
        "ouroboros.struggle_rate_per_1k_tool_calls_weekly"
    }
    assert [
        r["ticket"] for r in client.get("/api/ledger/fixer_sessions", params={"ticket": 105}).json()["rows"]
    ] == [105]
    unknown = client.get("/api/ledger/csf_ouroboros_secrets")
    assert (
        unknown.status_code == 404
        and "known: backtest_replays, closed_tickets, dead_letter_retries" in unknown.json()["detail"]
    )
    assert "unknown filter 'nope'" in client.get("/api/ledger/runs", params={"nope": 1}).json()["detail"]
    assert (
        "'abc' is not a int"
        in client.get("/api/ledger/fixer_sessions", params={"ticket": "abc"}).json()["detail"]
    )
    assert client.get("/api/ledger/merges", params={"refusal": "x"}).status_code == 400


def test_the_snapshot_is_served_and_its_absence_said(seeded: Seeded) -> None:
    client = _client(seeded.settings)
    snapshot = client.get("/api/ouroboros").json()
    assert (
        snapshot["series"]["ouroboros.compounding_per_week"][0]["value"] < 0
    )  # struggles fall week over week
    (seeded.settings.state_dir / "ouroboros.json").unlink()
    missing = client.get("/api/ouroboros")
    assert missing.status_code == 404 and "no snapshot yet" in missing.json()["detail"]


def test_the_labeler_run_comes_from_labeler_json_else_the_ledger(seeded: Seeded) -> None:
    client = _client(seeded.settings)
    assert client.get("/api/labeler").json()["source"] == "ledger"
    (seeded.settings.state_dir / "labeler.json").write_text(
        '{"started": "2026-10-04T10:00:00Z", "model": "qwen3:8b", "keep_alive_s": 40, "status": "yielding"}'
    )
    live = client.get("/api/labeler").json()
    assert live["source"] == "labeler.json" and live["run"]["status"] == "yielding"
    empty = _client(Settings(state=seeded.settings.state / "empty", broker_url="memory://")).get(
        "/api/labeler"
    )
    assert empty.status_code == 404


def test_spend_today_against_the_cap(seeded: Seeded, monkeypatch: pytest.MonkeyPatch) -> None:
    off = _client(seeded.settings).get("/api/spend").json()
    assert (off["spent_usd"], off["cap_usd"], off["fixers_on"], off["sessions"]) == (1.25, 0.0, False, 1)
    monkeypatch.setenv("OURO_FIXER_DAILY_CAP_USD", "10")  # the cap is a setting, read with the others
    on = (
        _client(Settings(state=seeded.settings.state, broker_url=seeded.settings.broker_url))
        .get("/api/spend")
        .json()
    )
    assert (on["cap_usd"], on["remaining_usd"], on["fixers_on"], on["zone"]) == (
        10.0,
        8.75,
        True,
        "America/Los_Angeles",
    )


def test_the_ops_page_and_its_files_are_served(seeded: Seeded) -> None:
    client = _client(seeded.settings)
    page = client.get("/")
    assert page.status_code == 200 and 'src="/page/app.js"' in page.text and "<svg" in page.text
    for name in ("app.js", "style.css"):
        assert client.get(f"/page/{name}").status_code == 200
    assert "cdn" not in client.get("/page/app.js").text.lower()  # offline: nothing is fetched from elsewhere

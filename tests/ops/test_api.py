"""The API's contract: reads open, writes behind the bearer token, OpenAPI published."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from ouroboros_gates.ops.api import LEDGER, create_app, redact
from ouroboros_gates.schemas.settings import Settings

LOCAL = "http://127.0.0.1"  # the API answers only the hosts it trusts


def _client(tmp_path: Path, token: str | None) -> TestClient:
    settings = Settings(state=tmp_path / "s", api_token=token, broker_url="memory://")
    return TestClient(create_app(settings, catch_up_every_s=None), base_url=LOCAL)


def test_writes_require_the_token(tmp_path: Path) -> None:
    client = _client(tmp_path, "s3cret")
    body = {"message_id": "api-probe-0001", "probe": "api"}
    assert client.post("/api/publish/Probe", json=body).status_code == 401
    wrong = client.post("/api/publish/Probe", json=body, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401


def test_writes_are_refused_when_no_token_is_configured(tmp_path: Path) -> None:
    client = _client(tmp_path, None)
    response = client.post("/api/publish/Probe", json={}, headers={"Authorization": "Bearer "})
    assert response.status_code == 403 and "OURO_API_TOKEN" in response.json()["detail"]


def test_reads_and_openapi(tmp_path: Path) -> None:
    client = _client(tmp_path, "t")
    assert client.get("/api/health").json() == {"ok": True, "head": 0, "timezone": "America/Los_Angeles"}
    assert client.get("/api/events").json() == []
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/api/health", "/api/status", "/api/events", "/api/publish/{type_name}"} <= set(paths)


def test_replay_needs_the_token_and_catches_up_or_rebuilds(tmp_path: Path) -> None:
    client = _client(tmp_path, "s3cret")
    assert client.post("/api/replay").status_code == 401
    auth = {"Authorization": "Bearer s3cret"}
    caught = client.post("/api/replay", headers=auth)
    assert caught.status_code == 200 and caught.json()["rebuilt"] is False
    rebuilt = client.post("/api/replay", params={"rebuild": "true"}, headers=auth).json()
    assert rebuilt["rebuilt"] is True and rebuilt["digest"] == caught.json()["digest"]


def test_an_invalid_message_is_refused_with_its_fields(tmp_path: Path) -> None:
    client = _client(tmp_path, "s3cret")
    response = client.post(
        "/api/publish/Probe", json={"message_id": "x"}, headers={"Authorization": "Bearer s3cret"}
    )
    assert response.status_code == 422
    assert {".".join(map(str, e["loc"])) for e in response.json()["detail"]} >= {"message_id", "probe"}


def test_openapi_lists_every_read_and_write(tmp_path: Path) -> None:
    paths = _client(tmp_path, "t").get("/openapi.json").json()["paths"]
    assert {
        "/api/ouroboros",
        "/api/findings",
        "/api/backtests",
        *(f"/api/ledger/{t}" for t in LEDGER),
        "/api/labeler",
        "/api/spend",
        "/api/replay",
        "/metrics",
    } <= set(paths)
    assert "post" in paths["/api/replay"] and "post" in paths["/api/publish/{type_name}"]


def test_no_read_shows_a_secret(tmp_path: Path) -> None:
    secrets = ("tok-s3cret", "flower-pw", "hunter2")
    settings = Settings(
        state=tmp_path / "s",
        api_token=secrets[0],
        flower_basic_auth=f"admin:{secrets[1]}",
        broker_url=f"redis://:{secrets[2]}@127.0.0.1:9/0",
    )
    client = TestClient(create_app(settings, catch_up_every_s=None), base_url=LOCAL)
    reads = [
        "/",
        "/page/app.js",
        "/openapi.json",
        "/api/health",
        "/api/events",
        "/api/findings",
        "/api/backtests",
        "/api/spend",
        "/api/labeler",
        "/api/ouroboros",
        "/metrics",
        *(f"/api/ledger/{table}" for table in LEDGER),
    ]
    for path in reads:
        body = client.get(path).text
        assert not [s for s in secrets if s in body], path


def test_broker_errors_lose_their_credentials() -> None:
    shown = redact(
        "ConnectionError: Error 111 connecting to redis://:hunter2@10.0.0.5:6379/0 and amqp://u:p@h//"
    )
    assert shown == "ConnectionError: Error 111 connecting to redis://***@10.0.0.5:6379/0 and amqp://***@h//"


def test_a_fresh_state_is_measured_once_so_the_snapshot_answers(tmp_path: Path) -> None:
    settings = Settings(state=tmp_path / "s", broker_url="memory://")
    snapshot = settings.state_dir / "ouroboros.json"
    assert not snapshot.exists()
    first = TestClient(create_app(settings, catch_up_every_s=None), base_url=LOCAL).get("/api/ouroboros")
    assert first.status_code == 200
    h_fleet = first.json()["series"]["ouroboros.h_fleet"][0]
    assert (
        h_fleet["labels"]["runs"] == "0" and h_fleet["value"] is None
    )  # an empty log, measured: nothing yet
    written = snapshot.read_bytes()
    again = TestClient(create_app(settings, catch_up_every_s=None), base_url=LOCAL).get("/api/ouroboros")
    assert written == snapshot.read_bytes()  # a snapshot that exists is left as it is
    assert again.json() == json.loads(written)

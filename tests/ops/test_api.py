"""The API's contract: reads open, writes behind the bearer token, OpenAPI published."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from events import Settings
from ops.api import create_app


def _client(tmp_path: Path, token: str | None) -> TestClient:
    settings = Settings(state=tmp_path / "s", api_token=token, broker_url="memory://")
    return TestClient(create_app(settings))


def test_writes_require_the_token(tmp_path: Path) -> None:
    client = _client(tmp_path, "s3cret")
    body = {"message_id": "api-probe-0001", "probe": "api"}
    assert client.post("/api/publish/Probe", json=body).status_code == 401
    wrong = client.post("/api/publish/Probe", json=body, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401


def test_writes_are_refused_when_no_token_is_configured(tmp_path: Path) -> None:
    client = _client(tmp_path, None)
    response = client.post("/api/publish/Probe", json={}, headers={"Authorization": "Bearer "})
    assert response.status_code == 401


def test_reads_and_openapi(tmp_path: Path) -> None:
    client = _client(tmp_path, "t")
    assert client.get("/api/health").json() == {"ok": True, "head": 0}
    assert client.get("/api/events").json() == []
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/api/health", "/api/status", "/api/events", "/api/publish/{type_name}"} <= set(paths)

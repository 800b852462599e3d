"""Every route of the API that writes answers 401 without the token or with a wrong one, and 403 when no token
is configured at all (writes are off); the routes are read from the app itself, so a write added later is held
to it too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from ouroboros_gates.ops.api import create_app
from ouroboros_gates.schemas.settings import Settings

LOCAL = "http://127.0.0.1"  # the API answers only the hosts it trusts

WRITES = {"POST", "PUT", "PATCH", "DELETE"}


def _app(tmp_path: Path, token: str | None) -> TestClient:
    settings = Settings(state=tmp_path / "s", api_token=token, broker_url="memory://")
    return TestClient(create_app(settings, catch_up_every_s=None), base_url=LOCAL)


def _writes(client: TestClient) -> list[tuple[str, str]]:
    found = []
    for route in client.app.routes:  # type: ignore[attr-defined]
        if isinstance(route, APIRoute):
            found += [
                (method, re.sub(r"\{[^}]+\}", "Probe", route.path))
                for method in (route.methods or set()) & WRITES
            ]
    return sorted(found)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": "Basic dG9rOnRvaw=="},
        {"Authorization": "Bearer "},
        {"Authorization": "Bearer tok2"},
        {"Authorization": "Bearer to"},
        {"Authorization": "tok"},
        {"Authorization": "Token tok"},
    ],
    ids=["none", "wrong", "basic", "empty", "longer", "shorter", "no-scheme", "other-scheme"],
)
def test_every_write_refuses_a_missing_or_wrong_token(tmp_path: Path, headers: dict[str, str]) -> None:
    client = _app(tmp_path, "tok")
    writes = _writes(client)
    assert ("POST", "/api/publish/Probe") in writes and ("POST", "/api/replay") in writes
    for method, path in writes:
        response = client.request(
            method, path, json={"message_id": "sec-write-0001", "probe": "x"}, headers=headers
        )
        assert response.status_code == 401, (method, path, response.status_code)
        assert response.headers["www-authenticate"] == "Bearer"


def test_every_write_is_refused_when_no_token_is_configured(tmp_path: Path) -> None:
    client = _app(tmp_path, None)
    for method, path in _writes(client):
        for headers in ({}, {"Authorization": "Bearer "}, {"Authorization": "Bearer None"}):
            assert client.request(method, path, json={}, headers=headers).status_code == 403, (method, path)


def test_the_right_token_is_let_through(tmp_path: Path) -> None:
    client = _app(tmp_path, "tok")
    response = client.post("/api/replay", headers={"Authorization": "Bearer tok"})
    assert response.status_code == 200
    assert client.post("/api/replay", headers={"Authorization": "bearer tok"}).status_code == 200  # RFC 7235

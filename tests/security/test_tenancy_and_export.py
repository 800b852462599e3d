"""A tenant's findings stay with the tenant: another tenant's API view shows only generic findings, gated;
the generic export holds generic findings only, re-keyed, with no operator name, e-mail, host or path."""

from __future__ import annotations

import socket
from pathlib import Path

import orjson
import pytest
from fastapi.testclient import TestClient

from ouroboros_gates.events import Metadata, SqlEventStore, StreamWrite, ensure_schema
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import catch_up
from ouroboros_gates.ops.api import create_app
from ouroboros_gates.ops.redact import Gate
from ouroboros_gates.schemas import Fact, Finding, FindingDerived, Number, Scope, Severity, Span, Text
from ouroboros_gates.schemas.settings import Settings

LOCAL = "http://127.0.0.1"  # the API answers only the hosts it trusts

WRITE = {"Authorization": "Bearer tok"}
# What an operator's run really carries: their home, e-mail, hosts, and their own name in a command.
LEAKY = (
    "cd /home/alice.lindqvist/src/shop && git push",
    "ssh deploy@build-07.corp.acme-internal.net",
    "curl http://10.20.30.40:8080/health",
    "mail alice.lindqvist@acme.example -s done",
    "/Users/alice/Library/agent.log",
    "C:\\Users\\alice\\work\\app.py",
    "acme-secret-project rebuild",
)


def _finding(run: str, scope: Scope, rule: str, file: str) -> Finding:
    proof = [
        Fact(predicate="tool_error", args=(Text(text=run), Text(text=text)), span=Span(file=file, line=i + 1))
        for i, text in enumerate(LEAKY)
    ]
    proof.append(Fact(predicate="knee", args=(Number(number=468),)))
    return Finding(
        miner="draft-pr-late",
        rule=rule,
        subject=(Text(text=run),),
        severity=Severity.S3,
        proof=tuple(proof),
        scope=scope,
    )


def _seed(tmp: Path) -> Settings:
    settings = Settings(
        state=tmp / "state", tenant="acme-secret-project", api_token="tok", broker_url="memory://"
    )
    store = SqlEventStore.from_url(settings.event_log_url)
    ensure_schema(store.engine)
    file = "/home/alice.lindqvist/.claude/projects/shop/run.jsonl"
    for tenant, run in (("acme-secret-project", "acme-run-1"), ("globex", "globex-run-1")):
        for scope in (Scope.TENANT, Scope.GENERIC):
            event = FindingDerived(run=run, finding=_finding(run, scope, f"{scope.value}_rule", file))
            meta = Metadata(producer="test.seed", message_id=f"{tenant}-{scope.value}", tenant=tenant)
            store.commit([StreamWrite(f"findings/{run}", [event])], meta)
    catch_up(store, PROJECTIONS)
    store.close()
    return settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return _seed(tmp_path)


def _client(settings: Settings, tenant: str) -> TestClient:
    return TestClient(
        create_app(settings.model_copy(update={"tenant": tenant}), catch_up_every_s=None), base_url=LOCAL
    )


def test_another_tenants_view_never_shows_a_tenant_scope_finding(settings: Settings) -> None:
    for viewer, other_run in (("globex", "acme-run-1"), ("acme-secret-project", "globex-run-1")):
        rows = _client(settings, viewer).get("/api/findings", params={"limit": 1000}).json()["rows"]
        foreign = [r for r in rows if r["run"] == other_run]
        assert [r["scope"] for r in foreign] == ["generic"], viewer
        assert all(r["scope"] == "generic" or r["tenant"] == viewer for r in rows)
        # Filtering by the other tenant cannot reach its tenant-scope findings either.
        other = "acme-secret-project" if viewer == "globex" else "globex"
        filtered = _client(settings, viewer).get("/api/findings", params={"tenant": other}).json()["rows"]
        assert [r["scope"] for r in filtered] == ["generic"]


def test_another_tenants_generic_finding_passes_the_identifier_gate(settings: Settings) -> None:
    rows = _client(settings, "globex").get("/api/findings").json()["rows"]
    acme = next(r for r in rows if r["run"] == "acme-run-1")
    shown = orjson.dumps([acme["proof"], acme["subject"]]).decode()
    gate = Gate(["acme-secret-project", "alice.lindqvist", "alice"])
    assert gate.find(shown) == [], gate.find(shown)
    assert all(fact["source"] is None for fact in acme["proof"])  # no source lines leave the tenant


def test_the_generic_export_holds_generic_findings_only_rekeyed_and_gated(settings: Settings) -> None:
    client = _client(settings, "globex")
    body = client.get("/api/export/findings").json()
    exported = body["findings"]
    assert [f["rule"] for f in exported] == [
        "generic_rule",
        "generic_rule",
    ]  # one per tenant, none tenant-scope
    text = orjson.dumps(exported).decode()
    for secret in (
        "acme-run-1",
        "globex-run-1",
        "acme-secret-project",
        "globex",
        "tenant",
        "alice",
        "lindqvist",
        "acme.example",
        "corp.acme-internal.net",
        "10.20.30.40",
        "/home/",
        "/Users/",
        socket.gethostname(),
    ):
        assert secret.lower() not in text.lower(), secret
    assert Gate(["acme-secret-project", "globex", "alice"]).find(text) == []
    instances = {f["instance"] for f in exported}
    assert len(instances) == 2 and all(len(i) == 32 for i in instances)
    # The same run inside one finding keeps one token: the proof still reads as one instance.
    first = exported[0]
    assert {fact["args"][0]["text"] for fact in first["proof"] if fact["predicate"] == "tool_error"} == {
        first["subject"][0]["text"]
    }
    assert all(set(fact) <= {"predicate", "args", "span"} for fact in first["proof"])  # facts and spans only
    assert {fact["span"]["file"] for fact in first["proof"] if "span" in fact} == {"run.jsonl"}
    # Re-keying is stable for this installation, so two exports agree.
    assert client.get("/api/export/findings").json()["findings"] == exported


def test_the_export_is_the_same_for_every_viewer(settings: Settings) -> None:
    assert (
        _client(settings, "globex").get("/api/export/findings").json()
        == _client(settings, "acme-secret-project").get("/api/export/findings").json()
    )

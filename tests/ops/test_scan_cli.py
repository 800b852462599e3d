"""``ouro scan`` on the example repository: the embedded default (memory vote, $0) and the LM program
against the scripted model server, valid SARIF, the ledger's decision rows, and ``--fail-on``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from decider.program import OperatingPoint, Program
from events import SqlEventStore
from events.projections.decisions import decisions
from ops.cli import app
from schemas.errors import OuroError

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "tests" / "decider" / "data" / "sarif-schema-2.1.0.json").read_text())


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "shop"
    subprocess.run(["git", "clone", "-q", str(ROOT / "examples" / "repo.bundle"), str(repo)], check=True)
    monkeypatch.setenv("OURO_STATE", str(tmp_path / "state"))
    for name in ("OURO_MODEL", "OURO_MODEL_URL", "OURO_EMBED_MODEL", "OURO_DATABASE_URL", "OURO_DECIDER_PROGRAM"):
        monkeypatch.delenv(name, raising=False)
    return repo


def rows(state: Path) -> list[Any]:
    store = SqlEventStore.from_url(f"sqlite:///{state / 'events.sqlite'}")
    with store.reading() as conn:
        return list(conn.execute(select(decisions)).mappings())


def test_scan_on_the_embedded_default(shop: Path) -> None:
    result = CliRunner().invoke(app, ["scan", str(shop), "--fail-on", "blocked"])
    assert result.exit_code == 0, result.output
    out = shop / ".ouroboros" / "scan"
    sarif = json.loads((out / "findings.sarif").read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(sarif)
    findings = json.loads((out / "findings.json").read_text())
    assert findings and {f["decision"]["variant"] for f in findings} == {"memory-vote"}
    assert {f["decision"]["operating_point"] for f in findings} <= {"advisory", "block"}
    assert "memory-vote program (no chat model configured)" in result.output
    meta = json.loads((out / "manifest.json").read_text())["decision"]
    assert meta["usd"] == 0 and meta["variant"] == "memory-vote"
    ledger = rows(shop.parent / "state")
    dropped = json.loads((out / "dropped_by_engine.json").read_text())
    assert len(ledger) == len(findings) + len(dropped) and {r["program_id"] for r in ledger} == {meta["program_id"]}
    again = CliRunner().invoke(app, ["scan", str(shop), "--fail-on", "findings"])
    assert again.exit_code == 1  # ADVISORY findings exist
    assert len(rows(shop.parent / "state")) == len(ledger)  # same decisions, same rows


def test_scan_with_the_lm_program_against_the_fake_model(
    shop: Path, model_server: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    program = Program(kind="llm-program", k=1,
                      operating_points={"*": OperatingPoint(advisory=0.4, block=0.8, block_offered=True)})  # fmt: skip
    path = tmp_path / "program.json"
    path.write_text(program.to_json())
    monkeypatch.setenv("OURO_DECIDER_PROGRAM", str(path))
    monkeypatch.setenv("OURO_MODEL", "local")
    monkeypatch.setenv("OURO_MODEL_URL", model_server.url + "/v1")
    yes = {"verdict": "vulnerable", "family": "x", "confidence": 0.9, "rationale": "Line 22 runs a shell.",
           "cited_lines": [22]}  # fmt: skip
    model_server.script([{"contains": "def export_report", "content": yes}],
                        default={"content": {**yes, "verdict": "not_vulnerable", "rationale": "see line 1",
                                             "cited_lines": []}})  # fmt: skip
    result = CliRunner().invoke(app, ["scan", str(shop), "--fail-on", "blocked"])
    assert result.exit_code == 1, result.output  # a BLOCK
    findings = json.loads((shop / ".ouroboros" / "scan" / "findings.json").read_text())
    blocked = [f for f in findings if f["decision"]["operating_point"] == "block"]
    assert blocked and {f["function"] for f in blocked} == {"export_report"}
    assert blocked[0]["decision"]["cited_lines"] == [22] and blocked[0]["decision"]["program_id"] == program.program_id
    jsonschema.Draft4Validator(SCHEMA).validate(
        json.loads((shop / ".ouroboros" / "scan" / "findings.sarif").read_text())
    )
    assert any(r["action"] == "BLOCK" for r in rows(shop.parent / "state"))


def test_scan_of_a_folder_that_is_not_a_checkout_is_one_error(tmp_path: Path, shop: Path) -> None:
    result = CliRunner().invoke(app, ["scan", str(tmp_path)])
    assert isinstance(result.exception, OuroError) and "not a git checkout" in str(result.exception)
    missing = CliRunner().invoke(app, ["scan", str(tmp_path / "nowhere")])
    assert isinstance(missing.exception, OuroError) and "no such directory" in str(missing.exception)

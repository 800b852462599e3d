"""``ouro replay --as-of TIME`` rebuilds every projection as it stood at TIME; ``--rebuild`` returns to
now."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select

from ouroboros_gates.events import Metadata, SqlEventStore, StreamWrite, ensure_schema
from ouroboros_gates.events.projections.runs import runs
from ouroboros_gates.schemas import RunRecorded, RunSummary, Usage

ROOT = Path(__file__).resolve().parents[2]


def _recorded(run: str) -> RunRecorded:
    summary = RunSummary(
        run=run,
        lines=3,
        malformed=0,
        tool_calls=1,
        tool_errors=0,
        usage=Usage(input_tokens=1),
        cost_usd=None,
        started_at=datetime(2026, 10, 1, tzinfo=UTC),
    )
    return RunRecorded(run=run, path=f"/runs/{run}/events.jsonl", summary=summary, digest="a" * 64)


def _ouro(url: str, state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OURO_DATABASE_URL": url, "OURO_STATE": str(state), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-c", "from ouroboros_gates.ops.cli import main; main()", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _runs(store: SqlEventStore) -> list[str]:
    with store.engine.connect() as conn:
        return [row[0] for row in conn.execute(select(runs.c.run).order_by(runs.c.run))]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_as_of_between_two_events_shows_only_the_first(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    store = SqlEventStore.from_url(url)
    ensure_schema(store.engine)
    store.commit([StreamWrite("run/first", [_recorded("first")])], Metadata("test", message_id="m-first"))
    time.sleep(0.05)
    between = datetime.now(UTC)
    time.sleep(0.05)
    store.commit([StreamWrite("run/second", [_recorded("second")])], Metadata("test", message_id="m-second"))

    past = _ouro(url, tmp_path / "state", "replay", "--as-of", between.isoformat().replace("+00:00", "Z"))
    assert past.returncode == 0, past.stderr
    assert _runs(store) == ["first"]
    out = " ".join(past.stdout.split())
    assert f"as of {between.isoformat()}" in out and "runs: 1 event(s)" in out and "ledger digest " in out
    assert "now show the past" in out and "`ouro replay --rebuild` returns them to now" in out

    now = _ouro(url, tmp_path / "state", "replay", "--rebuild")
    assert now.returncode == 0, now.stderr
    assert _runs(store) == ["first", "second"]

    bad = _ouro(url, tmp_path / "state", "replay", "--as-of", "yesterday")
    assert bad.returncode == 2 and bad.stderr.startswith(
        "ouro: error: --as-of: 'yesterday' is not an ISO 8601 time"
    )
    store.engine.dispose()

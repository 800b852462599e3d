"""``ouro miner NAME backtest ledger``: judged on the runs and labels the event log had recorded by then."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from ouroboros_gates.events import Metadata, SqlEventStore, StreamWrite, ensure_schema
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
from ouroboros_gates.workers.miner.ingest import ingest_run

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "miners" / "_template" / "fixtures"
LABELS = {  # the template's labels.tsv, as the labeler would have proposed them
    "6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e31": True,
    "6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e47": False,
    "6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e60": True,
}


def _ouro(url: str, state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OURO_DATABASE_URL": url, "OURO_STATE": str(state)}
    return subprocess.run(
        [sys.executable, "-c", "from ouroboros_gates.ops.cli import main; main()", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _append(store: SqlEventStore, stream: str, event: object, message_id: str) -> None:
    store.commit([StreamWrite(stream, [event])], Metadata(producer="test", message_id=message_id))  # type: ignore[list-item]


def _label(instance: str, positive: bool) -> LabelProposed:
    acceptance = Acceptance.ACCEPTED if positive else Acceptance.UNCHECKED
    span = Span(file=str(FIXTURES / instance / "events.jsonl"), line=1)
    label = ProposedLabel(
        ticket=7,
        instance=instance,
        positive=positive,
        quote="gh pr create --draft",
        span=span,
        acceptance=acceptance,
    )
    return LabelProposed(label=label)


def test_backtest_on_the_ledger_matches_the_labels_file_and_respects_as_of(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'log.db'}"
    store = SqlEventStore.from_url(url)
    ensure_schema(store.engine)
    settings = Settings(state=tmp_path / "state", roots=str(ROOT))
    for run in sorted(LABELS):
        recorded = ingest_run(IngestRun(message_id=f"i-{run}", path=str(FIXTURES / run), run=run), settings)
        _append(store, f"run/{run}", recorded, f"i-{run}")
    request = LabelRequest(ticket=7, miner="draft-pr-late", instances=tuple(LABELS), at=datetime.now(UTC))
    _append(store, "ticket/7", LabelRequested(request=request), "request-7")
    time.sleep(0.05)
    before_labels = datetime.now(UTC)
    time.sleep(0.05)
    for run, positive in LABELS.items():
        _append(store, "ticket/7", _label(run, positive), f"label-{run}")
    _append(store, "ticket/7", _label("not-a-recorded-run", True), "label-stray")

    from_file = _ouro(
        url, tmp_path, "miner", "_template", "backtest", "--json", str(FIXTURES / "labels.tsv"), str(FIXTURES)
    )
    from_ledger = _ouro(url, tmp_path, "miner", "_template", "backtest", "--json", "ledger")
    assert from_file.returncode == 0 and from_ledger.returncode == 0, from_ledger.stderr
    expected, got = json.loads(from_file.stdout), json.loads(from_ledger.stdout)
    for key in ("kappa_star", "fit", "judged", "tp", "fp", "fn"):
        assert got[key] == expected[key], key
    assert "not-a-recorded-run: no recorded run with a start time" in from_ledger.stderr

    earlier = _ouro(
        url, tmp_path, "miner", "_template", "backtest", "ledger", "--as-of", before_labels.isoformat()
    )
    assert earlier.returncode == 2
    assert "no labels recorded for draft-pr-late by" in earlier.stderr
    bad = _ouro(url, tmp_path, "miner", "_template", "backtest", "ledger", "--as-of", "yesterday")
    assert bad.returncode == 2 and "--as-of: 'yesterday' is not an ISO 8601 time" in bad.stderr

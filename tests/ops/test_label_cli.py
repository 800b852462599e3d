"""``ouro label`` against the scripted model server over the example tickets: accepted and rejected labels
with their reasons, printed, in labeler.jsonl and labeler.json, and in the event log; bad input is one
line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ouroboros_gates.events import SqlEventStore
from ouroboros_gates.forge import LocalForge
from ouroboros_gates.ops.cli._common import UsageError
from ouroboros_gates.ops.cli.label import read_tickets_file
from ouroboros_gates.workers.labeler import CUT, complete, prefilter, sources_for, terms_of

ROOT = Path(__file__).resolve().parents[2]
RUNS = {path.parent.name: path for path in sorted((ROOT / "examples" / "runs").glob("*/events.jsonl"))}
BATCH = 8


def _ouro(*args: str, state: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {
        **os.environ,
        "OURO_STATE": str(state),
        "OURO_FORGE": str(ROOT / "examples"),
        "COLUMNS": "250",
        **env,
    }
    for key in ("OURO_DATABASE_URL", "OURO_BROKER_URL", "OURO_MODEL", "OURO_MODEL_URL", "OURO_MODEL_API"):
        full.pop(key, None)
    return subprocess.run(
        [sys.executable, "-c", "from ouroboros_gates.ops.cli import main; main()", *args],
        cwd=ROOT,
        env={**full, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _batch(ticket: int, tmp_path: Path) -> list[Any]:
    job = complete(None, LocalForge.from_examples(ROOT / "examples", tmp_path / "cache").ticket(ticket))
    sources, _ = sources_for(job, RUNS, None)
    return list(prefilter(sources, terms_of(job.facts, job.predicate), limit=BATCH).candidates)


def _slice(excerpt: str) -> str:
    return excerpt.strip(CUT)[40:90]


def _answer(batch: list[Any], positives: dict[tuple[str, int], str]) -> dict[str, Any]:
    labels = []
    for number, c in enumerate(batch, start=1):
        quote = positives.get((c.instance[:8], c.line))
        labels.append(
            {
                "candidate": number,
                "label": "-" if quote is None else "+",
                "quote": quote or "",
                "reason": "r",
                "line": c.line,
            }
        )
    return {"labels": labels}


def test_ouro_label_gives_accepted_and_rejected_labels_with_reasons_for_the_example_tickets(
    tmp_path: Path, model_server: Any
) -> None:
    b44, b48 = _batch(44, tmp_path), _batch(48, tmp_path)
    pkill = next(c for c in b44 if (c.instance[:8], c.line) == ("3e7b1f5d", 27))
    usage = next(c for c in b48 if (c.instance[:8], c.line) == ("2f8c4d1e", 28))
    cut = usage.excerpt.strip(CUT)
    answers44 = _answer(b44, {("3e7b1f5d", 27): _slice(pkill.excerpt), ("9d41b7a3", 9): "pkill -f in a plan"})
    answers48 = _answer(
        b48,
        {
            ("2f8c4d1e", 28): f"{cut[20:50]} {CUT} {cut[120:150]}",
            ("d2f0a8c6", 18): "a run's prompt-cache hit ratio",
            ("4b9f0e6c", 31): "h_r is 0.42, below the floor",
        },
    )
    model_server.script(
        [
            {"contains": "Ticket #44\n", "content": answers44},
            {"contains": "Ticket #48\n", "content": answers48},
            {"contains": "Ticket #47\n", "malformed": True},
        ]
    )
    state = tmp_path / "state"
    env = {
        "OURO_MODEL": "fake-model",
        "OURO_MODEL_API": "ollama",
        "OURO_MODEL_URL": model_server.url,
        "OURO_LABELER_CANDIDATES": str(BATCH),
        "OURO_DOCKER_SOCKET": "",
    }
    result = _ouro(
        "label",
        "--ticket",
        "44",
        "--ticket",
        "47",
        "--ticket",
        "48",
        "--runs",
        str(ROOT / "examples" / "runs" / "*"),
        state=state,
        **env,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert (
        "miner self-match reproduces it: its facts name 3e7b1f5d-9c2a-4d84-a6f3-8b0e5d2c7a41 at line 27"
        in out
    )
    assert "miner self-match's facts do not name 9d41b7a3-0e5f-4a82-b6c9-3f7e1d2a5c60" in out
    assert "every fragment of the quote (2) is on line 28 in order" in out
    assert "the quote is lifted from the ticket's own words" in out
    assert "not on line 31: 'h_r is 0.42, below the floor'" in out
    assert "labeler completed: 3 ticket(s)" in out and "2 accepted, 3 rejected" in out and "(1 failed)" in out
    assert "GPU sharing off: no Docker Engine API (OURO_DOCKER_SOCKET unset)" in out
    assert "batch 2 failed: ReplyParseError" in out  # #47's batch; the run went on to #48
    record = json.loads((state / "labeler.json").read_text())
    assert (record["status"], record["accepted"], record["rejected"], record["batches"]) == (
        "completed",
        2,
        3,
        3,
    )
    lines = [json.loads(line) for line in (state / "labeler.jsonl").read_text().splitlines()]
    assert len(lines) == 2 * BATCH and sum(line["positive"] for line in lines) == 5
    store = SqlEventStore.from_url(f"sqlite:///{state / 'events.sqlite'}")
    events = store.read(limit=1000)
    assert sum(e.type == "LabelProposed" for e in events) == 2 * BATCH
    assert [e.payload["labeler_run"]["accepted"] for e in events if e.type == "LabelerRunCompleted"] == [2]
    assert {e.stream for e in events if e.type == "LabelProposed"} == {"ticket/44", "ticket/48"}


def test_without_a_model_the_requests_stay_queued_and_the_run_says_so(tmp_path: Path) -> None:
    result = _ouro("label", "--ticket", "48", "--runs", str(ROOT / "examples" / "runs"), state=tmp_path / "s")
    assert result.returncode == 0, result.stderr
    assert "no model configured (OURO_MODEL): 1 request(s) stay queued" in result.stdout
    assert "#48: 177 candidates wait for a model" in result.stdout


def test_bad_input_is_one_line_naming_where(tmp_path: Path) -> None:
    bad = tmp_path / "landed.tsv"
    bad.write_text("ticket\tgate\n105\tsynthetic labels\n#71\tsynthetic labels\nabc\tx\n")
    result = _ouro("label", "--tickets-file", str(bad), state=tmp_path / "s")
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and lines == [f"ouro: error: {bad}:4: 'abc' is not a ticket number"]
    bad.write_text("ticket\tgate\n105\tsynthetic labels\n# a comment\n\n#71\tsynthetic labels\n105\n")
    assert read_tickets_file(bad) == [105, 71]
    empty = _ouro("label", state=tmp_path / "s")
    assert empty.returncode == 2 and "no tickets: give --ticket N or --tickets-file F" in empty.stderr
    missing = _ouro("label", "--ticket", "999", state=tmp_path / "s")
    assert missing.returncode == 2 and "999" in missing.stderr
    with pytest.raises(UsageError, match="--tickets-file: cannot read"):
        read_tickets_file(tmp_path / "none.tsv")

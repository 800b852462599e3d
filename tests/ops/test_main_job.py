"""The README's main job, end to end on the embedded default: real worker process, real queue."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_cli import ROOT, ouro

pytestmark = pytest.mark.slow


def _envelope(ts: str, event_type: str, event: dict[str, object]) -> str:
    return json.dumps({"ts": ts, "event_type": event_type, "event": event})


def _write_run(root: Path, run: str, errors: int, costs: list[float]) -> None:
    lines = [
        _envelope("2026-10-01T10:00:00Z", "system", {"type": "system", "subtype": "init", "session_id": run})
    ]
    for n in range(3):
        call = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": f"echo {n}"}}
        lines.append(
            _envelope(
                f"2026-10-01T10:0{n + 1}:00Z",
                "assistant",
                {"type": "assistant", "message": {"content": [call]}},
            )
        )
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "x", "is_error": n < errors}
        lines.append(
            _envelope(
                f"2026-10-01T10:0{n + 1}:30Z", "user", {"type": "user", "message": {"content": [result]}}
            )
        )
    for cost in costs:
        usage = {"input_tokens": 10, "cache_read_input_tokens": 90, "output_tokens": 5}
        result = {"type": "result", "subtype": "success", "usage": usage, "total_cost_usd": cost}
        lines.append(_envelope("2026-10-01T10:09:00Z", "result", result))
    lines.append("{truncated")
    (root / run).mkdir(parents=True)
    (root / run / "events.jsonl").write_text("\n".join(lines) + "\n")


def test_loop_ingests_through_the_queue_and_a_second_run_prints_the_same(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    _write_run(corpus, "run-a", errors=1, costs=[0.5, 0.75])
    _write_run(corpus, "run-b", errors=2, costs=[0.25, 0.1, 0.3])  # the process was reopened
    forge = {"OURO_FORGE": str(ROOT / "examples")}  # the example tickets, pre-checked against these two runs
    first = ouro("loop", str(corpus), state=tmp_path / "state", **forge)
    assert first.returncode == 0, first.stderr + first.stdout
    # piped: each table is tab-separated lines, every value whole
    row_a = re.search(r"\nrun-a\t(\d+)\t(\d+)\t(\d+)\t(\d+)\t([\d.]+)\t", first.stdout)
    row_b = re.search(r"\nrun-b\t(\d+)\t(\d+)\t(\d+)\t(\d+)\t([\d.]+)\t", first.stdout)
    assert row_a and row_a.groups() == ("10", "3", "1", "1", "0.7500")
    assert row_b and row_b.groups() == ("11", "3", "2", "1", "0.5500")  # 0.25 + 0.3
    # recorded, then mined through the outbox by the accepted template (no draft PR for 540 s > κ* = 468)
    assert "\ndraft-pr-late\tinvisible\tgeneric\t2\t2: run-a, run-b\n" in first.stdout
    assert "score(run-a, 540)" in first.stdout
    assert "Accepted miners:" in first.stdout
    # the example tickets' runs are not in this corpus: only the pull requests and commits they name exist
    assert "Pre-check verdicts: 2 launch, 5 needs_labels (0 model calls)" in first.stdout
    assert re.search(r"#50\s+3392418870\s+self-merge\s+2\s+2\s+launch", first.stdout)
    assert "label requests queued for the labeler: #38, #41, #44, #47, #48" in first.stdout
    second = ouro("loop", str(corpus), state=tmp_path / "state", **forge)
    assert second.returncode == 0
    assert second.stdout.replace(str(tmp_path), "") == first.stdout.replace(str(tmp_path), "")

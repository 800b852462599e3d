"""A labeler run against the scripted model server (real HTTP on 127.0.0.1), in both APIs: labels accepted
and rejected with why, the keep-alive each request carries, the live record, and failed batches (malformed
JSON, an empty reply, a timeout) recorded with why while the run goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ouroboros_gates.schemas import Acceptance, CorpusKind, LabelerRun, LabelerStatus, ProposedLabel
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.labeler import CUT, GpuSharing, Labeler, Plan, Source
from ouroboros_gates.workers.labeler.client import chat_from_settings
from ouroboros_gates.workers.labeler.request import Job

LINES = [
    '{"type": "user", "content": "ran pytest"}',
    '{"type": "tool_use", "input": {"command": "pkill -f \\"pytest -k slow\\""}}',
    '{"type": "tool_result", "content": "Exit code 143"}',
    '{"type": "assistant", "text": "I will avoid pkill -f from now on"}',
]
JOB = Job(
    ticket=44,
    proposal=None,
    miner=None,
    corpus=(CorpusKind.JSONL,),
    instances=(),
    reason="",
    predicate="a Bash call runs `pkill -f` that matches its own shell",
    facts=('killed_self(R, L) :- a tool_result with "Exit code 143"',),
    words="Miner: pkill -f that matches its own shell; `Exit code 143`",
)


def _plan(tmp_path: Path) -> Plan:
    path = tmp_path / "run-1" / "events.jsonl"
    path.parent.mkdir()
    path.write_text("".join(line + "\n" for line in LINES))
    return Plan(JOB, [Source("run-1", str(path), path)])


def _labeler(settings: Settings, **kwargs: Any) -> tuple[Labeler, Any]:
    chat, model, client = chat_from_settings(settings)
    return Labeler(chat, model, GpuSharing(None), settings.state_dir, **kwargs), client


def _answers(*items: tuple[int, str, str, int]) -> dict[str, Any]:
    return {
        "labels": [
            {"candidate": c, "label": s, "quote": q, "reason": "because", "line": n} for c, s, q, n in items
        ]
    }


@pytest.mark.parametrize("api", ["ollama", "openai"])
def test_a_run_labels_accepts_and_rejects_with_why_in_both_apis(
    tmp_path: Path, model_server: Any, api: str
) -> None:
    url = model_server.url if api == "ollama" else model_server.url + "/v1"
    settings = Settings(state=tmp_path / "state", model="fake-model", model_api=api, model_url=url)
    # Candidates, best first: line 3 (Exit code 143 and tool_result, one line each), then lines 2 and 4
    # (pkill -f, on two lines); batches of two.
    model_server.script(
        [
            {
                "call": 0,
                "content": _answers(
                    (1, "+", "Exit code 143", 3),
                    (2, "+", f'pkill -f \\"pytest{CUT}slow', 2),
                ),
            },
            {"call": 1, "content": _answers((1, "+", "I will never use pkill", 4))},
        ]
    )
    labeler, client = _labeler(settings, batch_size=2)
    result = labeler.run([_plan(tmp_path)], "GPU sharing off: no Docker Engine API (test)")
    client.close()
    by_line = {label.span.line: label for label in result.labels}
    assert by_line[2].acceptance is Acceptance.ACCEPTED and "(2)" in by_line[2].why
    assert (
        by_line[4].acceptance is Acceptance.REJECTED
        and by_line[4].why == "not on line 4: 'I will never use pkill'"
    )
    assert by_line[3].acceptance is Acceptance.REJECTED and "ticket's own words" in by_line[3].why
    record = result.record
    assert (record.status, record.batches, record.accepted, record.rejected) == (
        LabelerStatus.COMPLETED,
        2,
        1,
        2,
    )
    assert record.candidates == 3 and record.failed_batches == 0 and record.model == "fake-model"
    assert record.notes[0] == "GPU sharing off: no Docker Engine API (test)"
    assert LabelerRun.model_validate_json((settings.state_dir / "labeler.json").read_text()) == record
    stored = [
        ProposedLabel.model_validate_json(x)
        for x in (settings.state_dir / "labeler.jsonl").read_text().splitlines()
    ]
    assert stored == list(result.labels)
    bodies = [call["body"] for call in model_server.calls()]
    assert len(bodies) == 2
    if api == "ollama":
        assert bodies[0]["format"]["required"] == ["labels"] and bodies[0]["keep_alive"] == 300.0
        # One load measured (2.4 s), no gap yet: twice the load.
        assert bodies[1]["keep_alive"] == pytest.approx(4.8)
    else:
        assert bodies[0]["response_format"]["type"] == "json_schema"


def test_failed_batches_are_recorded_with_why_and_the_run_goes_on(tmp_path: Path, model_server: Any) -> None:
    settings = Settings(
        state=tmp_path / "state",
        model="fake-model",
        model_api="ollama",
        model_url=model_server.url,
        model_timeout_s=0.3,
    )
    model_server.script(
        [
            {"call": 0, "malformed": True},
            {"call": 1, "empty": True},
            {"call": 2, "delay_s": 1.0, "content": _answers((1, "-", "", 1))},
        ]
    )
    labeler, client = _labeler(settings, batch_size=1)
    result = labeler.run([_plan(tmp_path)])
    client.close()
    record = result.record
    assert record.status is LabelerStatus.COMPLETED and record.batches == 3 and record.failed_batches == 3
    failed = [note for note in record.notes if " failed: " in note]
    assert [note.split(":")[0] for note in failed] == ["batch 1 failed", "batch 2 failed", "batch 3 failed"]
    assert "ReplyParseError" in failed[0] and "not JSON" in failed[0]
    assert "ReplyParseError" in failed[1] and "empty" in failed[1]
    assert "TransientLlmError" in failed[2]
    assert result.labels == () and record.accepted == record.rejected == 0


def test_an_answer_for_no_candidate_is_noted_and_the_rest_stands(tmp_path: Path, model_server: Any) -> None:
    settings = Settings(
        state=tmp_path / "state", model="fake-model", model_api="ollama", model_url=model_server.url
    )
    model_server.script([{"content": _answers((9, "+", "x", 1), (1, "-", "", 2), (1, "+", "again", 2))}])
    labeler, client = _labeler(settings, batch_size=2, max_candidates=2)
    result = labeler.run([_plan(tmp_path)])
    client.close()
    assert [label.span.line for label in result.labels] == [2] and result.record.failed_batches == 0
    notes = "\n".join(result.record.notes)
    assert "names candidate 9, not one of 1..2" in notes and "answered twice" in notes
    assert "no answer for candidate(s) 2" in notes and "3 candidates, the best 2 sent to the model" in notes


def test_with_no_model_the_candidates_are_counted_and_the_requests_stay_queued(tmp_path: Path) -> None:
    labeler, client = _labeler(Settings(state=tmp_path / "state"))
    assert client is None
    result = labeler.run([_plan(tmp_path)])
    assert result.labels == () and result.record.candidates == 3 and result.record.model == "none"
    assert (
        result.record.notes[-1]
        == "no model configured (OURO_MODEL): 1 request(s) stay queued, nothing labelled"
    )
    assert json.loads((tmp_path / "state" / "labeler.json").read_text())["status"] == "completed"


class _BusyGpu:
    """A Docker engine whose other GPU job ends after ``looks`` looks."""

    def __init__(self, looks: int) -> None:
        self.looks = looks

    def gpu_containers(self) -> list[tuple[str, dict[str, Any]]]:
        self.looks -= 1
        return [("trainer", {})] if self.looks >= 0 else []


def test_the_record_on_disk_says_yielding_while_another_container_holds_the_gpu(
    tmp_path: Path, model_server: Any
) -> None:
    settings = Settings(
        state=tmp_path / "state", model="fake-model", model_api="ollama", model_url=model_server.url
    )
    model_server.script([{"content": _answers((1, "-", "", 3))}])
    seen: list[dict[str, Any]] = []

    def sleep(seconds: float) -> None:
        seen.append({"slept": seconds, **json.loads((settings.state_dir / "labeler.json").read_text())})

    chat, model, client = chat_from_settings(settings)
    sharing = GpuSharing(_BusyGpu(2), container="ollama-1", sleep=sleep)  # type: ignore[arg-type]
    result = Labeler(chat, model, sharing, settings.state_dir, batch_size=3).run([_plan(tmp_path)])
    client.close()
    assert [s["status"] for s in seen] == ["yielding", "yielding"] and seen[0]["slept"] == 30.0
    assert "yielding the GPU to trainer" in seen[0]["notes"]
    assert result.record.status is LabelerStatus.COMPLETED and result.record.batches == 1

"""The readers' plain events: the same lines as the contract's typed events, with no model behind them."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from ouroboros_gates.harness import Reader, collect
from ouroboros_gates.harness.line import MODEL_FIELDS, LineEvent, Tokens, Where, valid_run_id
from ouroboros_gates.schemas import HarnessEvent, HarnessKind, RunId, Usage


def test_a_line_event_has_the_models_fields_and_no_other() -> None:
    assert set(MODEL_FIELDS) == set(HarnessEvent.model_fields) - {"schema_version"}
    assert set(Tokens.__dataclass_fields__) == set(Usage.model_fields) - {"schema_version"}


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json", ".ndjson"))


def test_every_real_log_reads_the_same_plain_and_typed(agent_logs: Path, fixtures: Path) -> None:
    files = _files(agent_logs) + _files(fixtures)
    assert len(files) > 20
    for path in files:
        reader = Reader([path], "r")
        typed = list(reader)
        typed_malformed = [str(bad) for bad in reader.malformed]
        plain = list(reader.plain())
        assert [event.typed() for event in plain] == typed, path
        assert [str(bad) for bad in reader.malformed] == typed_malformed, path


def test_a_value_the_model_refuses_marks_the_line_malformed_when_typed(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    log.write_text('{"type": "system", "session_id": "s"}\n{"type": "result", "total_cost_usd": 0.5}\n')
    reader = Reader([log], "r")
    original = LineEvent.typed

    def refusing(event: LineEvent, span: object = None) -> HarnessEvent:
        if event.kind is HarnessKind.RESULT:
            HarnessEvent.model_validate({"run": "r"})  # raises: kind and span are required
        return original(event, span)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(LineEvent, "typed", refusing)
        assert [event.kind for event in reader] == [HarnessKind.SYSTEM]
    assert [bad.span for bad in reader.malformed] == [Where(str(log), 2)]
    assert reader.malformed[0].reason.startswith("could not be typed: ")


RUNS = ["r1", "a.b:c-d_e", "x" * 128, "x" * 129, "", "-a", ".hidden", "a/b", "a\n", "é", "a b"]


@pytest.mark.parametrize("run", RUNS)
def test_the_run_id_rule_is_the_contracts(run: str) -> None:
    try:
        TypeAdapter(RunId).validate_python(run)
        contract = True
    except ValidationError:
        contract = False
    assert valid_run_id(run) is contract


def test_counting_a_log_is_the_typed_summary(agent_logs: Path) -> None:
    from ouroboros_gates.harness import read, summarise

    path = agent_logs / "claude_code_transcripts" / "subagent.jsonl"
    summary = summarise(read(path))
    typed = sum((event.usage for event in read(path) if event.usage is not None), Usage())
    assert summary.usage == typed == collect([path]).runs[0].usage.typed()

"""The contract as a whole: every type round-trips, rejects unknown fields and naive times, exports a
JSON Schema; the public surface is pinned; event types and task names are stable and well formed."""

from __future__ import annotations

import importlib
import inspect
import json
import re
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from ouroboros_gates import schemas
from ouroboros_gates.schemas import EVENT_TYPES, MESSAGE_TYPES, RECORD_TYPES, Event, Message, Record

Examples = dict[str, Callable[[], Record]]

MODULES = ("common", "decider", "events", "harness", "loop", "messages", "miners", "operator")

PUBLIC = [
    "EVENT_TYPES",
    "MESSAGE_TYPES",
    "NULL_COMMIT",
    "RECORD_TYPES",
    "AcceptMiner",
    "Acceptance",
    "Action",
    "Arg",
    "Backtest",
    "BacktestReplayed",
    "BacktestSummary",
    "Candidate",
    "CorpusKind",
    "DeadLetterRetried",
    "DecidePush",
    "Decision",
    "DecisionDismissed",
    "DecisionMade",
    "Digest",
    "Event",
    "Example",
    "ExperimentRegistered",
    "Fact",
    "FeatureName",
    "FeatureRecord",
    "FieldError",
    "Finding",
    "FindingDerived",
    "FixerOutcome",
    "FixerSession",
    "FixerSessionEnded",
    "HarnessEvent",
    "HarnessKind",
    "Identifier",
    "IngestRun",
    "InstrumentState",
    "Label",
    "LabelProposed",
    "LabelRequest",
    "LabelRequested",
    "LabelReviewed",
    "LabelRow",
    "LabelTicket",
    "LabelTier",
    "LabelerRun",
    "LabelerRunCompleted",
    "LabelerStatus",
    "LaunchFixer",
    "Measure",
    "MergeAttempted",
    "MergeOutcome",
    "MergeRefused",
    "MergeResult",
    "Merged",
    "Message",
    "MessageDeadLettered",
    "MessageRejected",
    "MineRun",
    "MinerAcceptance",
    "MinerAccepted",
    "MinerName",
    "MinerRefused",
    "MutantOutcome",
    "MutantResult",
    "MutationOperator",
    "MutationReport",
    "NonEmptyStr",
    "Number",
    "PrecheckCompleted",
    "PrecheckOutcome",
    "PrecheckSweep",
    "PrecheckTicket",
    "PrecheckVerdict",
    "Probe",
    "ProbeCompleted",
    "Profile",
    "Proposal",
    "ProposalPosted",
    "ProposedLabel",
    "ProposerCall",
    "ProposerCallCompleted",
    "Provenance",
    "PushReceived",
    "Record",
    "Review",
    "RunId",
    "RunMergeTrain",
    "RunRecorded",
    "RunSummary",
    "Scalar",
    "Scope",
    "SeriesName",
    "SeriesPoint",
    "SeriesPointRecorded",
    "Severity",
    "Sha",
    "Span",
    "State",
    "Text",
    "TicketClosed",
    "Timestamp",
    "Undecided",
    "Unit",
    "Usage",
    "content_id",
    "event_from_stored",
    "schema_for",
    "utc",
]

_ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def _isort_key(name: str) -> tuple[int, str]:
    # The order ruff's RUF022 keeps: SCREAMING_CASE, then CamelCase, then the rest.
    group = 0 if name.isupper() else 1 if name[0].isupper() else 2
    return group, name


def test_every_contract_type_has_an_example(contract_type: str, examples: Examples) -> None:
    assert contract_type in examples, f"add an example of {contract_type} to tests/schemas/conftest.py"


def test_every_example_is_a_contract_type(examples: Examples) -> None:
    assert set(examples) <= set(RECORD_TYPES) - {"Event", "Message"}


def test_round_trip_through_json(contract_type: str, examples: Examples) -> None:
    instance = examples[contract_type]()
    cls = RECORD_TYPES[contract_type]
    assert type(instance) is cls
    assert cls.model_validate_json(instance.model_dump_json()) == instance
    assert cls.parse_json(orjson.dumps(instance.to_json_dict())) == instance
    assert cls.model_validate(json.loads(json.dumps(instance.to_json_dict()))) == instance


def test_unknown_field_is_rejected_by_name(contract_type: str, examples: Examples) -> None:
    payload = examples[contract_type]().to_json_dict() | {"surprise_field": 1}
    with pytest.raises(ValidationError) as caught:
        RECORD_TYPES[contract_type].model_validate(payload)
    assert [(e["type"], e["loc"]) for e in caught.value.errors()] == [
        ("extra_forbidden", ("surprise_field",))
    ]
    assert "surprise_field" in str(caught.value)


def _naive(payload: dict[str, Any]) -> list[str]:
    return [key for key, value in payload.items() if isinstance(value, str) and _ISO_UTC.match(value)]


def test_naive_datetimes_are_rejected(contract_type: str, examples: Examples) -> None:
    payload = examples[contract_type]().to_json_dict()
    for key in _naive(payload):
        bad = payload | {key: payload[key].removesuffix("Z")}
        with pytest.raises(ValidationError) as caught:
            RECORD_TYPES[contract_type].model_validate(bad)
        assert caught.value.errors()[0]["type"] == "timezone_aware"
        assert caught.value.errors()[0]["loc"] == (key,)


def test_naive_datetime_check_reaches_every_timestamped_type(examples: Examples) -> None:
    timestamped = {name for name, make in examples.items() if _naive(make().to_json_dict())}
    assert {"LabelRow", "Measure", "SeriesPoint", "MergeAttempted", "Proposal", "Backtest"} <= timestamped


def test_schema_for_every_type(contract_type: str) -> None:
    schema = schemas.schema_for(contract_type)
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert "schema_version" in schema["properties"]
    json.dumps(schema)


def test_schema_for_an_event_type_and_an_unknown_name() -> None:
    assert schemas.schema_for("RunRecorded")["title"] == "RunRecorded"
    with pytest.raises(KeyError, match="close names: Finding"):
        schemas.schema_for("Findng")


def test_public_surface_is_pinned_and_sorted() -> None:
    assert schemas.__all__ == PUBLIC
    assert schemas.__all__ == sorted(schemas.__all__, key=_isort_key)
    for name in schemas.__all__:
        assert hasattr(schemas, name), name


@pytest.mark.parametrize("module_name", MODULES)
def test_every_module_is_re_exported(module_name: str) -> None:
    module = importlib.import_module(f"ouroboros_gates.schemas.{module_name}")
    assert module.__all__ == sorted(module.__all__, key=_isort_key)
    assert set(module.__all__) <= set(schemas.__all__)
    for name in module.__all__:
        assert getattr(schemas, name) is getattr(module, name)


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_class_has_a_one_line_docstring(module_name: str) -> None:
    module = importlib.import_module(f"ouroboros_gates.schemas.{module_name}")
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) and obj.__module__ == module.__name__:
            doc = obj.__doc__ or ""
            assert doc.strip() and "\n" not in doc.strip(), name


def test_event_types_are_unique_and_equal_to_class_names(event_type: str, examples: Examples) -> None:
    cls = EVENT_TYPES[event_type]
    assert issubclass(cls, Event)
    assert cls.TYPE == cls.__name__ == event_type
    assert RECORD_TYPES[event_type] is cls
    assert event_type in examples


def test_every_event_class_is_registered() -> None:
    declared = [
        cls
        for cls in RECORD_TYPES.values()
        if issubclass(cls, Event) and cls.__module__ == "ouroboros_gates.schemas.events"
    ]
    assert len(declared) == 22
    assert all(EVENT_TYPES[cls.TYPE] is cls for cls in declared)
    assert len({cls.TYPE for cls in declared}) == len(declared)


def test_message_tasks_are_well_formed_and_unique(message_type: str) -> None:
    cls = MESSAGE_TYPES[message_type]
    assert issubclass(cls, Message)
    assert re.fullmatch(r"[a-z]+\.[a-z_]+", cls.TASK), cls.TASK
    ours = [c.TASK for c in MESSAGE_TYPES.values() if c.__module__ == "ouroboros_gates.schemas.messages"]
    assert ours.count(cls.TASK) == 1


def test_message_tasks() -> None:
    tasks = {
        name: cls.TASK
        for name, cls in MESSAGE_TYPES.items()
        if cls.__module__ == "ouroboros_gates.schemas.messages"
    }
    assert tasks == {
        "IngestRun": "miner.ingest",
        "MineRun": "miner.mine",
        "AcceptMiner": "miner.accept",
        "PrecheckTicket": "prechecker.precheck",
        "PrecheckSweep": "prechecker.sweep",
        "LabelTicket": "labeler.label",
        "LaunchFixer": "fixer.launch",
        "DecidePush": "decider.decide",
        "RunMergeTrain": "merger.train",
        "Measure": "measurer.measure",
        "Probe": "fleet.probe",
    }


def test_event_from_stored_round_trips(event_type: str, examples: Examples) -> None:
    event = examples[event_type]()
    stored = json.loads(json.dumps(event.to_json_dict()))
    assert schemas.event_from_stored(event_type, stored) == event


def test_event_from_stored_refuses_unknown_types_and_versions(examples: Examples) -> None:
    with pytest.raises(KeyError, match="close names: RunRecorded"):
        schemas.event_from_stored("RunRecorde", {})
    payload = examples["RunRecorded"]().to_json_dict() | {"schema_version": 2}
    with pytest.raises(ValueError, match="upcaster"):
        schemas.event_from_stored("RunRecorded", payload)
    with pytest.raises(ValidationError):
        schemas.event_from_stored("TicketClosed", {"ticket": 0, "pull_request": 1, "reason": "x"})


def test_records_are_frozen(examples: Examples) -> None:
    span = examples["Span"]()
    assert isinstance(span, schemas.Span)
    with pytest.raises(ValidationError, match="frozen"):
        span.line = 4  # type: ignore[misc]


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_float_fields_refuse_values_json_cannot_carry(
    contract_type: str, examples: Examples, bad: float
) -> None:
    payload = examples[contract_type]().to_json_dict()
    for key in [k for k, v in payload.items() if isinstance(v, float)]:
        with pytest.raises(ValidationError) as caught:
            RECORD_TYPES[contract_type].model_validate(payload | {key: bad})
        assert caught.value.errors()[0]["loc"][0] == key


def _fresh(code: str) -> list[str]:
    """What a fresh interpreter prints after running ``code`` (the contract is imported afresh there)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_a_name_loads_its_own_family_and_a_registry_is_always_whole() -> None:
    code = (
        "import sys\n"
        "from ouroboros_gates.schemas import HarnessEvent, content_id\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('ouroboros_gates.schemas.'))))\n"
        "from ouroboros_gates.schemas import EVENT_TYPES\n"
        "print('RunRecorded' in EVENT_TYPES, 'DecisionMade' in EVENT_TYPES, 'LabelProposed' in EVENT_TYPES)\n"
    )
    families, whole = _fresh(code)[:-3], _fresh(code)[-3:]
    # HarnessEvent's own module (and what it imports), not the messages, events, loop or decider families
    assert {
        "ouroboros_gates.schemas.harness",
        "ouroboros_gates.schemas._base",
        "ouroboros_gates.schemas.common",
    } <= set(families)
    assert set(families).isdisjoint(
        {
            "ouroboros_gates.schemas.events",
            "ouroboros_gates.schemas.messages",
            "ouroboros_gates.schemas.loop",
            "ouroboros_gates.schemas.decider",
        }
    )
    # _base, loaded for content_id, holds the registries; they are bound only once every family has filled
    # them
    assert whole == ["True", "True", "True"]

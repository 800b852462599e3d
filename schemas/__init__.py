"""The contract: every message, event and record of Ouroboros, as pydantic models.

Modules, one per family (all re-exported here, each loaded when one of its names is first used, all of them
when a registry is; other packages import only from ``schemas``):

- ``common``: ``Arg`` (``Text`` | ``Number``), ``Span``, ``Fact``, ``Severity``, ``Scope``, ``Timestamp``.
- ``miners``: ``Finding`` with its proof, ``Backtest``, ``MutationReport``, ``LabelRow``, ``MinerAcceptance``.
- ``harness``: ``HarnessEvent`` (typed line, raw payload kept) and ``RunSummary``.
- ``loop``: proposals, pre-check verdicts, label requests and labels, labeler runs, fixer sessions,
  merge results, series points.
- ``decider``: ``Candidate``, ``FeatureRecord``, ``Label``, ``Example``, ``Decision``.
- ``events``: domain and fleet events (``Event`` subclasses, ``TYPE`` = class name).
- ``messages``: commands, one per worker task (``Message`` subclasses, ``TASK`` = ``"<worker>.<verb>"``).
- ``operator``: what an operator did through the API (a dead letter retried, a decision dismissed, a label
  reviewed, a backtest replayed), each an event.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ouroboros_gates._lazy import lazy

if TYPE_CHECKING:
    from ouroboros_gates.schemas._base import (
        EVENT_TYPES,
        MESSAGE_TYPES,
        RECORD_TYPES,
        Event,
        Message,
        Record,
        content_id,
    )
    from ouroboros_gates.schemas.common import (
        NULL_COMMIT,
        Arg,
        Digest,
        Fact,
        Identifier,
        MinerName,
        NonEmptyStr,
        Number,
        RunId,
        Scope,
        Severity,
        Sha,
        Span,
        Text,
        Timestamp,
        utc,
    )
    from ouroboros_gates.schemas.decider import (
        Action,
        Candidate,
        Decision,
        Example,
        FeatureName,
        FeatureRecord,
        InstrumentState,
        Label,
        LabelTier,
        Profile,
        Provenance,
        Scalar,
        State,
        Undecided,
        Unit,
    )
    from ouroboros_gates.schemas.events import (
        DecisionMade,
        ExperimentRegistered,
        FieldError,
        FindingDerived,
        FixerSessionEnded,
        LabelerRunCompleted,
        LabelProposed,
        LabelRequested,
        MergeAttempted,
        Merged,
        MergeRefused,
        MessageDeadLettered,
        MessageRejected,
        MinerAccepted,
        MinerRefused,
        PrecheckCompleted,
        ProbeCompleted,
        ProposalPosted,
        ProposerCallCompleted,
        PushReceived,
        RunRecorded,
        SeriesPointRecorded,
        TicketClosed,
    )
    from ouroboros_gates.schemas.harness import (
        HarnessEvent,
        RunSummary,
        Usage,
    )
    from ouroboros_gates.schemas.kinds import HarnessKind
    from ouroboros_gates.schemas.loop import (
        Acceptance,
        CorpusKind,
        FixerOutcome,
        FixerSession,
        LabelerRun,
        LabelerStatus,
        LabelRequest,
        MergeOutcome,
        MergeResult,
        PrecheckOutcome,
        PrecheckVerdict,
        Proposal,
        ProposedLabel,
        ProposerCall,
        SeriesName,
        SeriesPoint,
    )
    from ouroboros_gates.schemas.messages import (
        AcceptMiner,
        DecidePush,
        IngestRun,
        LabelTicket,
        LaunchFixer,
        Measure,
        MineRun,
        PrecheckSweep,
        PrecheckTicket,
        Probe,
        RunMergeTrain,
    )
    from ouroboros_gates.schemas.miners import (
        Backtest,
        BacktestSummary,
        Finding,
        LabelRow,
        MinerAcceptance,
        MutantOutcome,
        MutantResult,
        MutationOperator,
        MutationReport,
    )
    from ouroboros_gates.schemas.operator import (
        BacktestReplayed,
        DeadLetterRetried,
        DecisionDismissed,
        LabelReviewed,
        Review,
    )

__all__ = [
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

_HOMES = {
    "AcceptMiner": "ouroboros_gates.schemas.messages",
    "Acceptance": "ouroboros_gates.schemas.loop",
    "Action": "ouroboros_gates.schemas.decider",
    "Arg": "ouroboros_gates.schemas.common",
    "Backtest": "ouroboros_gates.schemas.miners",
    "BacktestReplayed": "ouroboros_gates.schemas.operator",
    "BacktestSummary": "ouroboros_gates.schemas.miners",
    "Candidate": "ouroboros_gates.schemas.decider",
    "CorpusKind": "ouroboros_gates.schemas.loop",
    "DeadLetterRetried": "ouroboros_gates.schemas.operator",
    "DecidePush": "ouroboros_gates.schemas.messages",
    "Decision": "ouroboros_gates.schemas.decider",
    "DecisionDismissed": "ouroboros_gates.schemas.operator",
    "DecisionMade": "ouroboros_gates.schemas.events",
    "Digest": "ouroboros_gates.schemas.common",
    "EVENT_TYPES": "ouroboros_gates.schemas._base",
    "Event": "ouroboros_gates.schemas._base",
    "Example": "ouroboros_gates.schemas.decider",
    "ExperimentRegistered": "ouroboros_gates.schemas.events",
    "Fact": "ouroboros_gates.schemas.common",
    "FeatureName": "ouroboros_gates.schemas.decider",
    "FeatureRecord": "ouroboros_gates.schemas.decider",
    "FieldError": "ouroboros_gates.schemas.events",
    "Finding": "ouroboros_gates.schemas.miners",
    "FindingDerived": "ouroboros_gates.schemas.events",
    "FixerOutcome": "ouroboros_gates.schemas.loop",
    "FixerSession": "ouroboros_gates.schemas.loop",
    "FixerSessionEnded": "ouroboros_gates.schemas.events",
    "HarnessEvent": "ouroboros_gates.schemas.harness",
    "HarnessKind": "ouroboros_gates.schemas.kinds",
    "Identifier": "ouroboros_gates.schemas.common",
    "IngestRun": "ouroboros_gates.schemas.messages",
    "InstrumentState": "ouroboros_gates.schemas.decider",
    "Label": "ouroboros_gates.schemas.decider",
    "LabelProposed": "ouroboros_gates.schemas.events",
    "LabelRequest": "ouroboros_gates.schemas.loop",
    "LabelRequested": "ouroboros_gates.schemas.events",
    "LabelReviewed": "ouroboros_gates.schemas.operator",
    "LabelRow": "ouroboros_gates.schemas.miners",
    "LabelTicket": "ouroboros_gates.schemas.messages",
    "LabelTier": "ouroboros_gates.schemas.decider",
    "LabelerRun": "ouroboros_gates.schemas.loop",
    "LabelerRunCompleted": "ouroboros_gates.schemas.events",
    "LabelerStatus": "ouroboros_gates.schemas.loop",
    "LaunchFixer": "ouroboros_gates.schemas.messages",
    "MESSAGE_TYPES": "ouroboros_gates.schemas._base",
    "Measure": "ouroboros_gates.schemas.messages",
    "MergeAttempted": "ouroboros_gates.schemas.events",
    "MergeOutcome": "ouroboros_gates.schemas.loop",
    "MergeRefused": "ouroboros_gates.schemas.events",
    "MergeResult": "ouroboros_gates.schemas.loop",
    "Merged": "ouroboros_gates.schemas.events",
    "Message": "ouroboros_gates.schemas._base",
    "MessageDeadLettered": "ouroboros_gates.schemas.events",
    "MessageRejected": "ouroboros_gates.schemas.events",
    "MineRun": "ouroboros_gates.schemas.messages",
    "MinerAcceptance": "ouroboros_gates.schemas.miners",
    "MinerAccepted": "ouroboros_gates.schemas.events",
    "MinerName": "ouroboros_gates.schemas.common",
    "MinerRefused": "ouroboros_gates.schemas.events",
    "MutantOutcome": "ouroboros_gates.schemas.miners",
    "MutantResult": "ouroboros_gates.schemas.miners",
    "MutationOperator": "ouroboros_gates.schemas.miners",
    "MutationReport": "ouroboros_gates.schemas.miners",
    "NULL_COMMIT": "ouroboros_gates.schemas.common",
    "NonEmptyStr": "ouroboros_gates.schemas.common",
    "Number": "ouroboros_gates.schemas.common",
    "PrecheckCompleted": "ouroboros_gates.schemas.events",
    "PrecheckOutcome": "ouroboros_gates.schemas.loop",
    "PrecheckSweep": "ouroboros_gates.schemas.messages",
    "PrecheckTicket": "ouroboros_gates.schemas.messages",
    "PrecheckVerdict": "ouroboros_gates.schemas.loop",
    "Probe": "ouroboros_gates.schemas.messages",
    "ProbeCompleted": "ouroboros_gates.schemas.events",
    "Profile": "ouroboros_gates.schemas.decider",
    "Proposal": "ouroboros_gates.schemas.loop",
    "ProposalPosted": "ouroboros_gates.schemas.events",
    "ProposedLabel": "ouroboros_gates.schemas.loop",
    "ProposerCall": "ouroboros_gates.schemas.loop",
    "ProposerCallCompleted": "ouroboros_gates.schemas.events",
    "Provenance": "ouroboros_gates.schemas.decider",
    "PushReceived": "ouroboros_gates.schemas.events",
    "RECORD_TYPES": "ouroboros_gates.schemas._base",
    "Record": "ouroboros_gates.schemas._base",
    "Review": "ouroboros_gates.schemas.operator",
    "RunId": "ouroboros_gates.schemas.common",
    "RunMergeTrain": "ouroboros_gates.schemas.messages",
    "RunRecorded": "ouroboros_gates.schemas.events",
    "RunSummary": "ouroboros_gates.schemas.harness",
    "Scalar": "ouroboros_gates.schemas.decider",
    "Scope": "ouroboros_gates.schemas.common",
    "SeriesName": "ouroboros_gates.schemas.loop",
    "SeriesPoint": "ouroboros_gates.schemas.loop",
    "SeriesPointRecorded": "ouroboros_gates.schemas.events",
    "Severity": "ouroboros_gates.schemas.common",
    "Sha": "ouroboros_gates.schemas.common",
    "Span": "ouroboros_gates.schemas.common",
    "State": "ouroboros_gates.schemas.decider",
    "Text": "ouroboros_gates.schemas.common",
    "TicketClosed": "ouroboros_gates.schemas.events",
    "Timestamp": "ouroboros_gates.schemas.common",
    "Undecided": "ouroboros_gates.schemas.decider",
    "Unit": "ouroboros_gates.schemas.decider",
    "Usage": "ouroboros_gates.schemas.harness",
    "content_id": "ouroboros_gates.schemas._base",
    "utc": "ouroboros_gates.schemas.common",
}
"""Where each name of ``__all__`` lives (the ``TYPE_CHECKING`` block says the same, for mypy)."""

__getattr__ = lazy(__name__, _HOMES, whole=frozenset({"EVENT_TYPES", "MESSAGE_TYPES", "RECORD_TYPES"}))


def _close(name: str, known: list[str]) -> str:
    import difflib  # only for a name that is not known

    close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
    return f"close names: {', '.join(close)}" if close else "no close names"


def schema_for(name: str) -> dict[str, Any]:
    """The JSON Schema of a contract type, by class name or event ``TYPE``."""
    __getattr__("RECORD_TYPES")  # every family loaded: the registries are whole
    model = RECORD_TYPES.get(name) or EVENT_TYPES.get(name)
    if model is None:
        known = sorted({*RECORD_TYPES, *EVENT_TYPES})
        raise KeyError(f"unknown contract type {name!r}; {_close(name, known)}")
    return model.model_json_schema()


def event_from_stored(type: str, payload: Mapping[str, Any], schema_version: int | None = None) -> Event:
    """The one decoding of a stored event: the class its ``type`` names, the payload brought from the
    ``schema_version`` it was stored at (the payload's own when not given) through that class's named
    upcasters, then validated.

    Raises ``UnknownEventType`` (a ``KeyError``) for an unknown type, ``UnknownSchemaVersion`` (a
    ``ValueError``) for a version the class cannot read, and pydantic's ``ValidationError`` for a payload
    that does not fit.
    """
    __getattr__("RECORD_TYPES")  # every family loaded: the registries are whole
    model = Event.registered(type)
    version = payload.get("schema_version", 1) if schema_version is None else schema_version
    return model.model_validate(model.upcast(payload, version))

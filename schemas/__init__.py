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

from ouroboros_gates.schemas._lazy import reexport

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

__getattr__ = reexport(__name__, __file__, whole=frozenset({"EVENT_TYPES", "MESSAGE_TYPES", "RECORD_TYPES"}))


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


def event_from_stored(type: str, payload: Mapping[str, Any]) -> Event:
    """Validate a stored event payload into the class its ``type`` names.

    Raises ``KeyError`` for an unknown type, ``ValueError`` for a payload written at another
    ``schema_version`` (an upcaster must bring it to the current one first), and pydantic's
    ``ValidationError`` for a payload that does not fit.
    """
    __getattr__("RECORD_TYPES")  # every family loaded: the registries are whole
    model = EVENT_TYPES.get(type)
    if model is None:
        raise KeyError(f"unknown event type {type!r}; {_close(type, sorted(EVENT_TYPES))}")
    version = payload.get("schema_version", 1)
    if version != model.SCHEMA_VERSION:
        raise ValueError(
            f"{type} payload is schema_version {version}, the class reads {model.SCHEMA_VERSION}: it needs an upcaster"
        )
    return model.model_validate(payload)

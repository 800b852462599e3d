"""Domain events: what happened, appended to the event log and folded into the ledger.

Each event's ``TYPE`` is its class name, written out so that moving or renaming the class cannot change
what is stored. Payloads carry ids and the record the event is about. The last three are the fleet's own:
a message refused at the door, a message sent to the dead-letter queue, and a health probe.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

import orjson
from pydantic import Field, ValidationError, model_validator

from ouroboros_gates.schemas._base import Event, Record
from ouroboros_gates.schemas.common import Digest, MinerName, NonEmptyStr, RunId, Sha, Timestamp
from ouroboros_gates.schemas.decider import Decision
from ouroboros_gates.schemas.harness import RunSummary
from ouroboros_gates.schemas.loop import (
    FixerSession,
    LabelerRun,
    LabelRequest,
    MergeOutcome,
    MergeResult,
    PrecheckVerdict,
    Proposal,
    ProposedLabel,
    ProposerCall,
    SeriesPoint,
)
from ouroboros_gates.schemas.miners import Finding, MinerAcceptance

__all__ = [
    "DecisionMade",
    "ExperimentRegistered",
    "FieldError",
    "FindingDerived",
    "FixerSessionEnded",
    "LabelProposed",
    "LabelRequested",
    "LabelerRunCompleted",
    "MergeAttempted",
    "MergeRefused",
    "Merged",
    "MessageDeadLettered",
    "MessageRejected",
    "MinerAccepted",
    "MinerRefused",
    "PrecheckCompleted",
    "ProbeCompleted",
    "ProposalPosted",
    "ProposerCallCompleted",
    "PushReceived",
    "RunRecorded",
    "SeriesPointRecorded",
    "TicketClosed",
]

_EXCERPT = 120


class RunRecorded(Event):
    """A harness run's log was ingested and summarised."""

    TYPE: ClassVar[str] = "RunRecorded"

    run: RunId = Field(description="The run id.")
    path: NonEmptyStr = Field(description="Its ``events.jsonl``, relative to the state root.")
    summary: RunSummary = Field(description="What reading it found.")
    digest: Digest = Field(
        description="sha256 of the file as read (a re-ingest of the same bytes is a no-op)."
    )

    @model_validator(mode="after")
    def _same_run(self) -> Self:
        if self.summary.run != self.run:
            raise ValueError(f"summary is for run {self.summary.run!r}, not {self.run!r}")
        return self


class FindingDerived(Event):
    """A miner derived a finding, with its proof, from a run."""

    TYPE: ClassVar[str] = "FindingDerived"

    run: RunId = Field(description="The run the facts came from.")
    finding: Finding = Field(description="The finding and its proof.")


class MinerAccepted(Event):
    """A miner passed its test, its backtest and its mutation gate, and became a gate."""

    TYPE: ClassVar[str] = "MinerAccepted"

    acceptance: MinerAcceptance = Field(description="Miner, scope, backtest summary and mutation score.")


class MinerRefused(Event):
    """A miner version failed its test in the fleet (checks, backtest or mutation gate): it does not gate."""

    TYPE: ClassVar[str] = "MinerRefused"

    miner: MinerName = Field(description="The refused miner.")
    digest: Digest = Field(description="sha256 of the miner's files as judged (the version refused).")
    reason: NonEmptyStr = Field(description="What failed, as its test reported it.")
    judged_runs: tuple[RunId, ...] = Field(
        default=(), description="The recorded runs its mutants were judged on, beside its fixtures."
    )


class ProposalPosted(Event):
    """A mining proposal was posted on a ticket."""

    TYPE: ClassVar[str] = "ProposalPosted"

    proposal: Proposal = Field(description="The proposal.")


class ProposerCallCompleted(Event):
    """The proposer made one model call for a batch of mining tickets (its cost row)."""

    TYPE: ClassVar[str] = "ProposerCallCompleted"

    call: ProposerCall = Field(description="Tickets, tokens, USD, seconds and load of the call.")


class PrecheckCompleted(Event):
    """The pre-check judged a ticket's latest proposal."""

    TYPE: ClassVar[str] = "PrecheckCompleted"

    verdict: PrecheckVerdict = Field(description="launch or needs_labels, with the instances.")


class LabelRequested(Event):
    """A ticket was queued for the labeler."""

    TYPE: ClassVar[str] = "LabelRequested"

    request: LabelRequest = Field(description="The queued request.")


class LabelProposed(Event):
    """The labeler proposed one label and checked whether it reproduces."""

    TYPE: ClassVar[str] = "LabelProposed"

    label: ProposedLabel = Field(description="The label with its acceptance and why.")


class LabelerRunCompleted(Event):
    """A labeler run ended (completed or failed)."""

    TYPE: ClassVar[str] = "LabelerRunCompleted"

    labeler_run: LabelerRun = Field(description="The run record.")


class FixerSessionEnded(Event):
    """A fixer session was closed and its outcome read from its pull request."""

    TYPE: ClassVar[str] = "FixerSessionEnded"

    session: FixerSession = Field(description="The session, its cost and outcome.")


class MergeAttempted(Event):
    """The merge train took one pull request head (each head is tried once)."""

    TYPE: ClassVar[str] = "MergeAttempted"

    pull_request: int = Field(ge=1, description="The pull request.")
    head_sha: Sha = Field(description="The head taken.")
    at: Timestamp = Field(description="When.")


class Merged(Event):
    """The merge train merged a pull request head."""

    TYPE: ClassVar[str] = "Merged"

    result: MergeResult = Field(description="The result; its outcome is ``merged``.")

    @model_validator(mode="after")
    def _merged(self) -> Self:
        if self.result.outcome is not MergeOutcome.MERGED:
            raise ValueError(f"Merged carries a merged result, not {self.result.outcome.value!r}")
        return self


class MergeRefused(Event):
    """The merge train refused a head (gate or NO-SELF-MERGE) or skipped it without running the gate."""

    TYPE: ClassVar[str] = "MergeRefused"

    result: MergeResult = Field(description="The result; its outcome is ``refused`` or ``skipped``.")

    @model_validator(mode="after")
    def _not_merged(self) -> Self:
        if self.result.outcome is MergeOutcome.MERGED:
            raise ValueError("MergeRefused cannot carry a merged result")
        return self


class TicketClosed(Event):
    """The close-ticket gate closed a ticket on a merged pull request's backtest."""

    TYPE: ClassVar[str] = "TicketClosed"

    ticket: int = Field(ge=1, description="The ticket closed.")
    pull_request: int = Field(ge=1, description="The merged pull request whose body proved it.")
    reason: NonEmptyStr = Field(description="Why, e.g. ``Backtest FN 0; every check row exits 0``.")


class PushReceived(Event):
    """A push (base..head on a ref) arrived for the decider."""

    TYPE: ClassVar[str] = "PushReceived"

    repo: NonEmptyStr = Field(description="Repository key.")
    base: Sha = Field(description="The remote's old tip (all zeros for a new ref).")
    head: Sha = Field(description="The pushed tip.")
    ref: NonEmptyStr = Field(description="The ref pushed, e.g. ``refs/heads/main``.")


class DecisionMade(Event):
    """The decider decided one candidate."""

    TYPE: ClassVar[str] = "DecisionMade"

    decision: Decision = Field(description="The decision.")
    flows: tuple[str, ...] = Field(
        default=(), description="The taint flows the instruments found in the candidate, one line each."
    )


class SeriesPointRecorded(Event):
    """The measurer recorded one point of a series."""

    TYPE: ClassVar[str] = "SeriesPointRecorded"

    point: SeriesPoint = Field(description="The point.")


class FieldError(Record):
    """One reason a message was invalid: where, what, and an excerpt of the input."""

    field: str = Field(
        description="Dotted location, e.g. ``request.ticket`` (``(message)`` for the whole message)."
    )
    message: NonEmptyStr = Field(description="What is wrong, as the validator said it.")
    input: str = Field(default="", max_length=_EXCERPT, description="The offending input, shortened.")


def _excerpt(value: object) -> str:
    try:
        text = orjson.dumps(value, default=repr).decode()
    except TypeError:  # what orjson cannot write at all (an integer past 64 bits): its repr
        text = orjson.dumps(repr(value)).decode()
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"


class MessageRejected(Event):
    """A message failed validation at the door; it is recorded, never silently dropped."""

    TYPE: ClassVar[str] = "MessageRejected"

    task: NonEmptyStr = Field(description="The task it was sent to.")
    message_id: str | None = Field(default=None, description="Its message id, when it had a readable one.")
    errors: tuple[FieldError, ...] = Field(min_length=1, description="Every validation error.")

    @classmethod
    def from_validation_error(cls, task: str, message_id: str | None, exc: ValidationError) -> Self:
        """The event for a pydantic ``ValidationError``, one ``FieldError`` per error."""
        errors = tuple(
            FieldError(
                field=".".join(str(part) for part in error["loc"]) or "(message)",  # the payload as a whole
                message=error["msg"],
                input=_excerpt(error.get("input")),
            )
            for error in exc.errors(include_url=False)
        )
        return cls(task=task, message_id=message_id, errors=errors)


class MessageDeadLettered(Event):
    """A message kept failing and went to the dead-letter queue after bounded retries."""

    TYPE: ClassVar[str] = "MessageDeadLettered"

    task: NonEmptyStr = Field(description="The task that kept failing.")
    message_id: NonEmptyStr = Field(description="The message id.")
    attempts: int = Field(ge=1, description="Attempts made.")
    error_type: NonEmptyStr = Field(description="The last error's type name.")
    error: str = Field(description="The last error's text.")
    message: dict[str, Any] | None = Field(
        default=None,
        description="The message as it was sent (what a retry sends again); None before it was kept.",
    )
    permanent: bool = Field(
        default=False,
        description="Retrying cannot help (a path outside the roots, a missing setting): the error says "
        "what to "
        "fix; whoever waits for the message stops waiting.",
    )


class ProbeCompleted(Event):
    """A ``fleet.probe`` task held for its time and finished on a worker."""

    TYPE: ClassVar[str] = "ProbeCompleted"

    probe: NonEmptyStr = Field(description="The probe id.")
    hostname: NonEmptyStr = Field(description="The worker host that ran it.")
    held_s: float = Field(ge=0.0, allow_inf_nan=False, description="Seconds it held.")


class ExperimentRegistered(Event):
    """A pre-registered experiment: the digests of its manifest and frozen units file, committed at HEAD."""

    TYPE: ClassVar[str] = "ExperimentRegistered"

    experiment: NonEmptyStr = Field(description="The experiment id.")
    manifest_sha256: Digest = Field(description="sha256 of the manifest as committed.")
    units_sha256: Digest = Field(description="sha256 of the frozen units file as committed.")
    code_commit: Sha = Field(description="HEAD when it was registered.")

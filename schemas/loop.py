"""The loop around the miners: proposals, pre-check verdicts, label requests and labels, the labeler's
run record, fixer sessions, merge results and measured series points (the ledger's rows: docs/loop.md,
"The ledger").
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Self

from pydantic import Field, StringConstraints, model_validator

from ouroboros_gates.schemas._base import Record
from ouroboros_gates.schemas.common import MinerName, NonEmptyStr, Sha, Span, Timestamp

__all__ = [
    "Acceptance",
    "CorpusKind",
    "FixerOutcome",
    "FixerSession",
    "LabelRequest",
    "LabelerRun",
    "LabelerStatus",
    "MergeOutcome",
    "MergeResult",
    "PrecheckOutcome",
    "PrecheckVerdict",
    "Proposal",
    "ProposedLabel",
    "ProposerCall",
    "SeriesName",
    "SeriesPoint",
]

SeriesName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$", max_length=128)]
"""A dotted series name, e.g. ``ouroboros.struggle_rate_per_1k_tool_calls``."""


class CorpusKind(StrEnum):
    """A kind of corpus item an extractor reads."""

    JSONL = "jsonl"
    ISSUE = "issue"
    PULL_REQUEST = "pull_request"
    FILE_AT = "file_at"


class Proposal(Record):
    """A mining proposal, as posted in a ticket comment: miner, corpus, instances, rule and labels."""

    ticket: int = Field(ge=1, description="The mining ticket.")
    comment_id: int = Field(ge=1, description="The comment that carries the proposal.")
    miner: MinerName = Field(description="The proposed miner's name.")
    corpus: tuple[CorpusKind, ...] = Field(description="The corpus kinds its extractor reads.")
    instances: tuple[NonEmptyStr, ...] = Field(default=(), description="The instances the proposal names.")
    predicate: str = Field(default="", description="The predicate, in the proposal's words.")
    facts: tuple[str, ...] = Field(default=(), description="The proposed fact lines.")
    rules: str = Field(default="", description="The proposed ``rules.dl`` text.")
    labels: tuple[str, ...] = Field(default=(), description="The proposed label lines, as written.")
    posted_at: Timestamp = Field(description="When the comment was posted.")


class ProposerCall(Record):
    """One model call of the proposer (a cost row): the batch of tickets it asked about and what it cost."""

    family: NonEmptyStr = Field(description="The model family, e.g. ``haiku``.")
    model: NonEmptyStr = Field(description="The model the provider answered with.")
    tickets: tuple[int, ...] = Field(min_length=1, description="The tickets of the batch.")
    artifacts: int = Field(ge=0, description="Proposals the reply carried that could be posted.")
    input_tokens: int = Field(ge=0, description="Uncached input tokens.")
    cache_read_tokens: int = Field(ge=0, description="Input tokens read from the provider's prompt cache.")
    cache_creation_tokens: int = Field(ge=0, description="Input tokens written to the prompt cache.")
    output_tokens: int = Field(ge=0, description="Output tokens.")
    cost_usd: float = Field(ge=0.0, allow_inf_nan=False, description="Priced from the model's manifest.")
    wall_s: float = Field(ge=0.0, allow_inf_nan=False, description="Seconds the call took.")
    load: float | None = Field(
        default=None, allow_inf_nan=False, description="The host's 1-minute load then."
    )
    cached: bool = Field(default=False, description="Replayed from the response cache at $0.")
    at: Timestamp = Field(description="When the call ended.")


class PrecheckOutcome(StrEnum):
    """The pre-check's answer for a ticket."""

    LAUNCH = "launch"
    NEEDS_LABELS = "needs_labels"


class PrecheckVerdict(Record):
    """Whether a ticket's latest proposal names at least one real instance of a kind its extractor reads."""

    ticket: int = Field(ge=1, description="The ticket checked.")
    proposal: int | None = Field(default=None, ge=1, description="Comment id of the proposal; None if none.")
    miner: MinerName | None = Field(default=None, description="The proposal's miner, if it names one.")
    verdict: PrecheckOutcome = Field(description="launch, or needs_labels (queued for the labeler).")
    instances_named: tuple[NonEmptyStr, ...] = Field(default=(), description="Instances the proposal named.")
    instances_found: tuple[NonEmptyStr, ...] = Field(
        default=(), description="Those that exist and are of a kind the extractor reads."
    )
    reason: str = Field(default="", description="Why, in one line.")

    @model_validator(mode="after")
    def _found_backs_verdict(self) -> Self:
        stray = sorted(set(self.instances_found) - set(self.instances_named))
        if stray:
            raise ValueError(f"instances found that the proposal did not name: {stray}")
        if (self.verdict is PrecheckOutcome.LAUNCH) != bool(self.instances_found):
            raise ValueError("launch requires at least one instance found, needs_labels requires none")
        return self


class LabelRequest(Record):
    """A queued request for the labeler: a ticket whose proposal named no real instance."""

    ticket: int = Field(ge=1, description="The ticket to label.")
    proposal: int | None = Field(default=None, ge=1, description="Comment id of the proposal, if any.")
    miner: MinerName | None = Field(default=None, description="The proposal's miner, if any.")
    corpus: tuple[CorpusKind, ...] = Field(default=(), description="Corpus kinds to search.")
    instances: tuple[NonEmptyStr, ...] = Field(
        default=(), description="The instances the proposal named that named nothing real."
    )
    reason: str = Field(default="", description="The pre-check's reason.")
    at: Timestamp = Field(description="When the request was queued.")


class Acceptance(StrEnum):
    """Whether a proposed label reproduced."""

    ACCEPTED = "ACCEPTANCE_ACCEPTED"
    REJECTED = "ACCEPTANCE_REJECTED"
    UNCHECKED = "ACCEPTANCE_UNCHECKED"


class ProposedLabel(Record):
    """A label the labeler's model proposed, and whether it reproduced (a negative is not checked)."""

    ticket: int = Field(ge=1, description="The ticket it labels for.")
    instance: NonEmptyStr = Field(description="The instance labelled.")
    positive: bool = Field(description="True for + (an instance of the predicate), False for -.")
    quote: str = Field(description="The verbatim quote the model gave.")
    reason: str = Field(default="", description="The model's reason.")
    span: Span = Field(description="The line the quote is claimed to be on.")
    acceptance: Acceptance = Field(description="Accepted, rejected, or unchecked (a negative).")
    why: str = Field(default="", description="Why it was accepted or rejected.")

    @model_validator(mode="after")
    def _positives_are_checked(self) -> Self:
        if self.positive == (self.acceptance is Acceptance.UNCHECKED):
            raise ValueError("a positive is accepted or rejected; only a negative is unchecked")
        if self.acceptance is Acceptance.REJECTED and not self.why:
            raise ValueError("a rejected label needs its why")
        return self


class LabelerStatus(StrEnum):
    """Where a labeler run stands."""

    RUNNING = "running"
    YIELDING = "yielding"
    COMPLETED = "completed"
    FAILED = "failed"


class LabelerRun(Record):
    """The labeler's run record (``labeler.json``), shown live on the ops page."""

    started: Timestamp = Field(description="When the run started.")
    ended: Timestamp | None = Field(default=None, description="When it ended; None while it runs.")
    tickets: tuple[int, ...] = Field(default=(), description="The tickets in the run.")
    batches: int = Field(default=0, ge=0, description="Batches sent to the model.")
    candidates: int = Field(default=0, ge=0, description="Candidate lines the prefilter produced.")
    accepted: int = Field(default=0, ge=0, description="Positives that reproduced.")
    rejected: int = Field(default=0, ge=0, description="Positives that did not.")
    model: NonEmptyStr = Field(description="The model, e.g. ``qwen3:8b``.")
    keep_alive_s: float = Field(
        ge=0.0, allow_inf_nan=False, description="max(2 x median gap between batch starts, 2 x load)."
    )
    status: LabelerStatus = Field(description="running, yielding (GPU busy), completed or failed.")
    failed_batches: int = Field(default=0, ge=0, description="Batches whose reply could not be used.")
    notes: tuple[str, ...] = Field(
        default=(),
        description="What the run says of itself: GPU sharing, queued requests, each failed batch's why.",
    )

    @model_validator(mode="after")
    def _ended_when_done(self) -> Self:
        done = self.status in (LabelerStatus.COMPLETED, LabelerStatus.FAILED)
        if done != (self.ended is not None):
            raise ValueError("a completed or failed run has an end time, a live one does not")
        if self.ended is not None and self.ended < self.started:
            raise ValueError("ended is before started")
        return self


class FixerOutcome(StrEnum):
    """What a fixer session left behind, read from its pull request."""

    READY = "ready"
    DRAFT = "draft"
    NO_PULL_REQUEST = "no_pull_request"


class FixerSession(Record):
    """One fixer agent session on a launched ticket, in its own worktree and branch."""

    ticket: int = Field(ge=1, description="The ticket it worked on.")
    branch: NonEmptyStr = Field(description="``miner/<name>-<prefix>``.")
    worktree: NonEmptyStr = Field(description="The session's git worktree.")
    started: Timestamp = Field(description="When the session started.")
    ended: Timestamp = Field(description="When the session was closed.")
    cost_usd: float = Field(ge=0.0, allow_inf_nan=False, description="Cost folded from its event log.")
    overrun_usd: float = Field(
        default=0.0,
        ge=0.0,
        allow_inf_nan=False,
        description="What it spent past its reservation: in cost_usd, never charged to the day's cap.",
    )
    cost_estimated: bool = Field(
        default=False,
        description="Its spend was not reported in full (the agent cut off, failed or silent): cost_usd is "
        "an estimate, at least its reservation.",
    )
    outcome: FixerOutcome = Field(description="ready, draft or no_pull_request.")
    pull_request: int | None = Field(default=None, ge=1, description="Its pull request, if any.")
    isolation: str | None = Field(
        default=None,
        max_length=500,
        description="How its agent was isolated (the sandbox's mode, in words); None in earlier records.",
    )

    @model_validator(mode="after")
    def _pull_request_matches_outcome(self) -> Self:
        if (self.outcome is FixerOutcome.NO_PULL_REQUEST) != (self.pull_request is None):
            raise ValueError("ready and draft name a pull request; no_pull_request names none")
        if self.ended < self.started:
            raise ValueError("ended is before started")
        return self


class MergeOutcome(StrEnum):
    """What the merge train did with one head."""

    MERGED = "merged"
    REFUSED = "refused"
    SKIPPED = "skipped"


class MergeResult(Record):
    """The merge train's result for one pull request head."""

    pull_request: int = Field(ge=1, description="The pull request.")
    head_sha: Sha = Field(description="The head it ran on (tried once per head).")
    outcome: MergeOutcome = Field(description="merged, refused (gate or NO-SELF-MERGE) or skipped.")
    refusal: tuple[str, ...] = Field(default=(), description="The refusal lines (commented on the PR).")
    at: Timestamp = Field(description="When.")

    @model_validator(mode="after")
    def _refusal_matches_outcome(self) -> Self:
        if self.outcome is MergeOutcome.REFUSED and not self.refusal:
            raise ValueError("a refused head carries its refusal lines")
        if self.outcome is MergeOutcome.MERGED and self.refusal:
            raise ValueError("a merged head has no refusal lines")
        return self


class SeriesPoint(Record):
    """One measured point of a series; an unmeasurable point says why instead of inventing a value."""

    series: SeriesName = Field(description="e.g. ``ouroboros.struggle_rate_per_1k_tool_calls``.")
    at: Timestamp = Field(description="The instant (or period start) the point is for.")
    value: float | None = Field(allow_inf_nan=False, description="The value; None when not measurable.")
    reason: str | None = Field(default=None, description="Why there is no value (required then).")
    low: float | None = Field(default=None, allow_inf_nan=False, description="95% interval, lower end.")
    high: float | None = Field(default=None, allow_inf_nan=False, description="95% interval, upper end.")
    labels: dict[str, str] = Field(default_factory=dict, description="Dimensions, e.g. ``{'run': 'r1'}``.")

    @model_validator(mode="after")
    def _value_or_reason(self) -> Self:
        if self.value is None and not self.reason:
            raise ValueError("a point without a value needs a reason")
        if (self.low is None) != (self.high is None):
            raise ValueError("an interval has both ends or neither")
        if self.low is not None and self.high is not None and not self.low <= self.high:
            raise ValueError(f"interval low {self.low} is above high {self.high}")
        return self

"""What an operator did from the ops page or the API: each action is an event, so the log says who changed
what.

The API appends these behind its token (``docs/operations.md``, "Actions"): a dead letter sent again, a
decision dismissed, a proposed label accepted or rejected by hand, and a miner's backtest re-run on the
ledger as it stood at a past time. Each carries the instant it was taken and the operator's note.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar, Self

from pydantic import Field, model_validator

from ouroboros_gates.schemas._base import Event
from ouroboros_gates.schemas.common import MinerName, NonEmptyStr, Timestamp
from ouroboros_gates.schemas.decider import Candidate
from ouroboros_gates.schemas.miners import Backtest

__all__ = ["BacktestReplayed", "DeadLetterRetried", "DecisionDismissed", "LabelReviewed", "Review"]

_NOTE = 500


class DeadLetterRetried(Event):
    """An operator sent a dead-lettered message again, as a new message queued through the outbox."""

    TYPE: ClassVar[str] = "DeadLetterRetried"

    task: NonEmptyStr = Field(description="The task the message is for.")
    message_id: NonEmptyStr = Field(description="The dead-lettered message's id.")
    retry_message_id: NonEmptyStr = Field(description="The id of the message sent in its place.")
    attempt: int = Field(ge=1, description="Which retry of this dead letter it is (1 for the first).")
    at: Timestamp = Field(description="When it was sent again.")
    note: str = Field(default="", max_length=_NOTE, description="The operator's note.")


class DecisionDismissed(Event):
    """An operator dismissed one of the decider's decisions (it stays in the log, marked dismissed)."""

    TYPE: ClassVar[str] = "DecisionDismissed"

    candidate: Candidate = Field(description="The decided candidate (the decision's key).")
    fingerprint: NonEmptyStr = Field(description="sha256 of path::function#family, stable across pins.")
    at: Timestamp = Field(description="When it was dismissed.")
    note: str = Field(default="", max_length=_NOTE, description="Why, in the operator's words.")


class Review(StrEnum):
    """An operator's verdict on a proposed label."""

    ACCEPTED = "accepted"
    REJECTED = "rejected"


class LabelReviewed(Event):
    """An operator accepted or rejected a proposed label; the ledger's labels take it over the labeler's."""

    TYPE: ClassVar[str] = "LabelReviewed"

    label: int = Field(ge=1, description="Log position of the ``LabelProposed`` event reviewed.")
    ticket: int = Field(ge=1, description="The label's ticket.")
    instance: NonEmptyStr = Field(description="The label's instance.")
    review: Review = Field(description="accepted or rejected.")
    at: Timestamp = Field(description="When it was reviewed.")
    note: str = Field(default="", max_length=_NOTE, description="Why, in the operator's words.")


class BacktestReplayed(Event):
    """A miner's walk-forward backtest re-run on the runs and labels the log had recorded by ``as_of``."""

    TYPE: ClassVar[str] = "BacktestReplayed"

    miner: MinerName = Field(description="The miner.")
    as_of: Timestamp = Field(description="The log as it stood at this instant was judged.")
    labels: int = Field(ge=0, description="Labels the ledger held for the miner by then.")
    runs: int = Field(ge=0, description="Runs recorded by then.")
    backtest: Backtest | None = Field(default=None, description="The result; None when it could not run.")
    error: str | None = Field(default=None, max_length=2000, description="Why it could not run.")
    at: Timestamp = Field(description="When it was re-run.")

    @model_validator(mode="after")
    def _result_or_error(self) -> Self:
        if (self.backtest is None) == (self.error is None):
            raise ValueError("a replay carries its backtest or the error that stopped it, not both")
        return self

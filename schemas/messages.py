"""Commands for the fleet: one message type per worker task, named ``"<worker>.<verb>"``.

Messages carry ids and digests, not snapshots of entities: a worker loads what it needs by id. The two
exceptions carry small immutable values the receiver cannot re-derive cheaply (the label request a
ticket was queued with, and the pre-check verdict that launched a fixer).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Self

from pydantic import Field, StringConstraints, model_validator

from ouroboros_gates.schemas._base import Message
from ouroboros_gates.schemas.common import Digest, NonEmptyStr, RunId, Sha, Timestamp
from ouroboros_gates.schemas.loop import LabelRequest, PrecheckOutcome, PrecheckVerdict

__all__ = [
    "AcceptMiner",
    "DecidePush",
    "IngestRun",
    "LabelTicket",
    "LaunchFixer",
    "Measure",
    "MineRun",
    "PrecheckSweep",
    "PrecheckTicket",
    "Probe",
    "RunMergeTrain",
]

_PathText = Annotated[str, StringConstraints(pattern=r"^[^\x00]+$", max_length=4096)]


class IngestRun(Message):
    """Ingest one run's ``events.jsonl`` into the event log."""

    TASK: ClassVar[str] = "miner.ingest"

    path: _PathText = Field(description="The file to read; the worker confines it to the state root.")
    run: RunId = Field(description="The run id it is recorded under.")


class MineRun(Message):
    """Run every miner the fleet accepted over one recorded run."""

    TASK: ClassVar[str] = "miner.mine"

    run: RunId = Field(description="The run to mine.")
    path: _PathText = Field(
        description="The run as recorded (its file or folder); the worker confines it to the roots."
    )
    digest: Digest = Field(description="sha256 of the run as recorded (the message id follows it).")


class AcceptMiner(Message):
    """Judge each miner version the log holds no verdict on, then mine one run (its ``MineRun`` follows)."""

    TASK: ClassVar[str] = "miner.accept"

    mine: MineRun = Field(description="The run to mine once every miner version found has its verdict.")

    @model_validator(mode="after")
    def _same_tenant(self) -> Self:
        if self.mine.tenant != self.tenant:
            raise ValueError(f"the run is mined for tenant {self.mine.tenant!r}, not {self.tenant!r}")
        return self


class PrecheckTicket(Message):
    """Pre-check one ticket's latest proposal."""

    TASK: ClassVar[str] = "prechecker.precheck"

    ticket: int = Field(ge=1, description="The ticket.")


class PrecheckSweep(Message):
    """Pre-check every open mining ticket (hourly trigger): one ``PrecheckTicket`` each, via the outbox."""

    TASK: ClassVar[str] = "prechecker.sweep"


class LabelTicket(Message):
    """Label one ticket, from its queued request or from the ticket alone."""

    TASK: ClassVar[str] = "labeler.label"

    ticket: int = Field(ge=1, description="The ticket.")
    request: LabelRequest | None = Field(default=None, description="The queued request, if any.")

    @model_validator(mode="after")
    def _same_ticket(self) -> Self:
        if self.request is not None and self.request.ticket != self.ticket:
            raise ValueError(f"request is for ticket {self.request.ticket}, not {self.ticket}")
        return self


class LaunchFixer(Message):
    """Launch one fixer session on a ticket the pre-check let through."""

    TASK: ClassVar[str] = "fixer.launch"

    ticket: int = Field(ge=1, description="The ticket.")
    verdict: PrecheckVerdict = Field(description="The launch verdict, naming the instances found.")

    @model_validator(mode="after")
    def _launchable(self) -> Self:
        if self.verdict.ticket != self.ticket:
            raise ValueError(f"verdict is for ticket {self.verdict.ticket}, not {self.ticket}")
        if self.verdict.verdict is not PrecheckOutcome.LAUNCH:
            raise ValueError(f"cannot launch a fixer on a {self.verdict.verdict.value} verdict")
        return self


class DecidePush(Message):
    """Decide every candidate of one push base..head."""

    TASK: ClassVar[str] = "decider.decide"

    repo: NonEmptyStr = Field(description="Repository key.")
    base: Sha = Field(description="The remote's old tip (all zeros for a new ref).")
    head: Sha = Field(description="The pushed tip.")
    ref: NonEmptyStr = Field(description="The ref pushed.")
    path: _PathText | None = Field(
        default=None,
        description="The local checkout (confined to the roots); the forge's repository if unset.",
    )
    priors: Literal["off", "detected", "all"] = Field(
        default="detected",
        description="Framework and library priors: none, what each file imports (default), or all.",
    )


class RunMergeTrain(Message):
    """Run the merge train once over every ready pull request."""

    TASK: ClassVar[str] = "merger.train"


class Measure(Message):
    """Measure every series as of an instant."""

    TASK: ClassVar[str] = "measurer.measure"

    at: Timestamp = Field(description="The instant measured.")


class Probe(Message):
    """A health check: hold for ``hold_s`` seconds, then append ``ProbeCompleted``."""

    TASK: ClassVar[str] = "fleet.probe"

    probe: NonEmptyStr = Field(description="The probe id.")
    hold_s: float = Field(default=0.0, ge=0.0, le=600.0, description="Seconds to hold before completing.")
    chain: int = Field(default=0, ge=0, le=100, description="Follow-up probes to ask for through the outbox.")

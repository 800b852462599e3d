"""The API's response bodies as pydantic models, so that every route's answer has its schema in OpenAPI.

Records of the contract (``LabelerRun``, ``Backtest``, ``BacktestReplayed``...) are used as they are; the
rows of a ledger table are typed from the table's own columns (``row_model``), so the schema cannot drift
from the ledger. Models of files another process writes (the measurer's snapshot) allow fields they do not
name, which are passed through.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model
from sqlalchemy import JSON, Table

from ouroboros_gates.schemas import Arg, BacktestReplayed, Candidate, LabelerRun, MinerAcceptance

__all__ = [
    "AcceptedMiner",
    "BacktestsPage",
    "DeadLetter",
    "DeadLettersPage",
    "DecisionRow",
    "DecisionsPage",
    "DismissRecorded",
    "Dismissed",
    "EventRow",
    "ExportPage",
    "FindingRow",
    "FindingsPage",
    "FleetStatus",
    "Health",
    "LabelRow",
    "LabelerShown",
    "LabelsPage",
    "Page",
    "Problem",
    "ProofFact",
    "Published",
    "ReplayDone",
    "ReplayRecorded",
    "Retried",
    "Reviewed",
    "Snapshot",
    "SpendShown",
    "Workers",
    "row_model",
]


class Problem(BaseModel):
    """Why a request was refused: one line, or the validation errors naming each field."""

    detail: str | list[dict[str, Any]] = Field(description="What is wrong, and where.")


class Health(BaseModel):
    """The server answers: the event log's head and the zone every time is shown in."""

    ok: bool
    head: int = Field(description="The event log's last position.")
    timezone: str = Field(description="The loop's zone (OURO_TIMEZONE); the page shows every time in it.")


class ProjectionLag(BaseModel):
    """Where one ledger projection stands."""

    name: str
    position: int = Field(description="The last position it folded.")
    lag: int = Field(description="Events recorded since, not yet folded.")
    rows: int = Field(description="Rows in its tables.")


class FleetStatus(BaseModel):
    """What ``ouro status`` shows: queue depths, messages in flight, dead letters, rejections, the outbox,
    projection lag, and whether the broker and the event log answered."""

    head: int
    queues: dict[str, int | None] = Field(
        description="Messages waiting per queue; None when the broker cannot say."
    )
    in_flight: dict[str, int | None] = Field(
        description="Messages a worker has taken and not yet acknowledged, per queue; None when the broker "
        "cannot say."
    )
    dead_letters_recorded: int
    rejected: int
    outbox_pending: int = Field(description="Follow-up messages committed but not yet published.")
    projections: list[ProjectionLag]
    broker_error: str | None = Field(
        description="The broker's error, credentials cut; None when it answered."
    )
    database_error: str | None = Field(
        description="The event log's error, credentials cut; None when it answered."
    )


class RunningTask(BaseModel):
    """A task a worker is running now."""

    worker: str
    id: str = Field(description="The task id (the message id).")
    name: str = Field(description="The task, e.g. ``miner.mine``.")
    started: str | None = Field(description="When it started (ISO 8601, UTC).")


class Workers(BaseModel):
    """The workers answering the broker's ping and the tasks they run, or why nobody can say."""

    available: bool = Field(description="Whether the broker could be asked (remote control).")
    reason: str | None = Field(default=None, description="Why not, when it could not.")
    workers: list[str] = Field(default_factory=list, description="Node names of the workers that answered.")
    running: list[RunningTask] = Field(default_factory=list)


class EventRow(BaseModel):
    """One event of the log as stored."""

    position: int
    stream: str
    version: int
    type: str
    payload: dict[str, Any]
    recorded_at: str


class SpanShown(BaseModel):
    """A file and a line (another tenant's spans keep the file's base name only)."""

    file: str
    line: int


class ProofFact(BaseModel):
    """One fact of a proof, written out, with the source line it was read from when it can be shown."""

    predicate: str
    args: list[Arg]
    span: SpanShown | None = None
    text: str = Field(description='The fact as written, e.g. ``score("r1", 1259)``.')
    where: str | None = Field(description="``file:line``, or None for a constant.")
    source: str | None = Field(
        description="The text of that line; None when it is not this tenant's or not readable."
    )


class FindingRow(BaseModel):
    """A finding with its proof."""

    miner: str
    rule: str
    subject: list[Arg]
    run: str
    severity: str
    scope: str
    tenant: str
    proof: list[ProofFact]
    position: int


class FindingsPage(BaseModel):
    """A page of findings, with what the filters can take."""

    rows: list[FindingRow]
    total: int = Field(description="Findings matching the filters.")
    offset: int
    limit: int
    next: int | None = Field(
        description="With sort=position, order=asc: the ``after`` cursor of the next page."
    )
    next_offset: int | None = Field(description="The ``offset`` of the next page; None on the last one.")
    facets: dict[str, list[str]] = Field(
        description="Values each filter can take (miner, rule, scope, severity)."
    )


def _absent(value: object) -> bool:
    return value is None


class ExportedArg(BaseModel):
    """An exported argument: text (re-keyed or gated) or a number (the other is left out)."""

    text: str | None = Field(default=None, exclude_if=_absent)
    number: float | None = Field(default=None, exclude_if=_absent)


class ExportedFact(BaseModel):
    """An exported fact: predicate, arguments and the span's file base name."""

    predicate: str
    args: list[ExportedArg]
    span: SpanShown | None = Field(default=None, exclude_if=_absent)


class ExportedFinding(BaseModel):
    """A generic finding as exported: re-keyed, gated, facts and spans only."""

    instance: str
    miner: str
    rule: str
    severity: str
    subject: list[ExportedArg]
    proof: list[ExportedFact]


class ExportPage(BaseModel):
    """A page of the generic export."""

    findings: list[ExportedFinding]
    next: int | None


AcceptedMiner: type[BaseModel] = create_model(
    "AcceptedMiner",
    __doc__="A miner's acceptance (it became a gate), where it stands in the log and when.",
    position=(int, ...),
    recorded_at=(str, ...),
    **{name: (field.annotation, field) for name, field in MinerAcceptance.model_fields.items()},  # type: ignore[call-overload]
)


class BacktestsPage(BaseModel):
    """A page of acceptances."""

    rows: list[AcceptedMiner]
    next: int | None


class SnapshotPoint(BaseModel):
    """A series' latest point, as the measurer wrote it."""

    model_config = ConfigDict(extra="allow")

    at: str
    value: float | None
    low: float | None = None
    high: float | None = None
    reason: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)


class Offender(BaseModel):
    """A run whose cache ratio h_r is below the floor."""

    model_config = ConfigDict(extra="allow")

    rank: int
    run: str
    h_r: float | None = None


class HFleet(BaseModel):
    """h_fleet, its floor and the offenders."""

    model_config = ConfigDict(extra="allow")

    value: float | None
    floor: float
    offenders: list[Offender] = Field(default_factory=list)


class ScopeCount(BaseModel):
    """Accepted miners of one scope."""

    model_config = ConfigDict(extra="allow")

    count: int
    miners: list[str]


class Snapshot(BaseModel):
    """The measurer's snapshot (``<state>/ouroboros.json``)."""

    model_config = ConfigDict(extra="allow")

    generated_at: str
    timezone: str
    series: dict[str, list[SnapshotPoint]]
    h_fleet: HFleet
    accepted_miners: dict[str, ScopeCount]


class LabelerShown(BaseModel):
    """The labeler's latest run: the live ``labeler.json``, else the ledger's last completed run."""

    source: Literal["labeler.json", "ledger"]
    run: LabelerRun


class SpendShown(BaseModel):
    """Fixer spend on today's budget day against the cap."""

    day: str
    zone: str
    spent_usd: float
    cap_usd: float
    sessions: int
    fixers_on: bool
    remaining_usd: float


class Dismissed(BaseModel):
    """A dismissal: when, by which event, and the note."""

    at: str
    note: str
    position: int


class DecisionRow(BaseModel):
    """The decider's decision on one candidate, with its flows, rationale and dismissal."""

    repo: str
    pin: str
    path: str
    function: str
    family: str
    action: str
    operating_point: Literal["block", "advisory", "drop"]
    p: float | None
    rationale: str
    program_id: str
    model: str | None
    cost_usd: float
    cached: bool
    undecided: str | None
    flows: list[str]
    position: int
    dismissed: Dismissed | None


class DecisionsPage(BaseModel):
    """A page of decisions and the values the filters can take."""

    rows: list[DecisionRow]
    total: int
    offset: int
    limit: int
    next_offset: int | None
    repos: list[str] = Field(description="Repositories with decisions.")
    counts: dict[str, int] = Field(description="Decisions per operating point under the repository filter.")


class Review(BaseModel):
    """An operator's review of a proposed label."""

    review: Literal["accepted", "rejected"]
    at: str
    note: str
    position: int


class LabelRow(BaseModel):
    """A proposed label, the labeler's check, and the operator's review."""

    position: int
    ticket: int
    instance: str
    positive: bool
    quote: str
    reason: str
    file: str
    line: int
    acceptance: str
    why: str
    review: Review | None


class LabelsPage(BaseModel):
    """A page of proposed labels."""

    rows: list[LabelRow]
    next: int | None


class Retry(BaseModel):
    """The latest retry of a dead letter."""

    attempt: int
    retry_message_id: str
    at: str
    position: int


class DeadLetter(BaseModel):
    """A message the fleet gave up on, and whether it was sent again."""

    position: int
    task: str
    message_id: str
    attempts: int
    error_type: str
    error: str
    retryable: bool = Field(description="Whether its message was kept, so that it can be sent again.")
    retry: Retry | None


class DeadLettersPage(BaseModel):
    """A page of dead letters, newest first."""

    rows: list[DeadLetter]
    next: int | None


class Page(BaseModel):
    """A page of ledger rows (each route names its table's row model)."""

    table: str
    rows: list[dict[str, Any]]
    next: int | None


class Published(BaseModel):
    """A message accepted onto the broker."""

    message_id: str
    task: str


class ReplayDone(BaseModel):
    """The ledger caught up (or rebuilt) and its digest."""

    rebuilt: bool
    applied: dict[str, int]
    digest: str


class Retried(BaseModel):
    """A dead letter sent again: the event recorded and the message queued."""

    position: int | None = Field(
        description="The event's position; None when this retry was recorded already."
    )
    retry_message_id: str
    attempt: int
    published: bool = Field(description="Whether the broker took it now (else the outbox sweep sends it).")


class DismissRecorded(BaseModel):
    """A dismissal recorded (or found recorded already)."""

    position: int | None = Field(description="The event's position; None when it was dismissed already.")
    candidate: Candidate


class ReplayRecorded(BaseModel):
    """A backtest re-run as of a time, as recorded."""

    position: int | None = Field(
        description="The event's position; None when the same replay was recorded already."
    )
    replay: BacktestReplayed


class Reviewed(BaseModel):
    """A label review recorded (or found unchanged)."""

    position: int | None = Field(description="The event's position; None when the review was already so.")
    label: int
    review: Literal["accepted", "rejected"]


def row_model(table: Table) -> type[BaseModel]:
    """A model of one row of ``table``, typed from its columns (a JSON column is any JSON value)."""
    fields: dict[str, Any] = {}
    for column in table.columns:
        kind: Any = Any if isinstance(column.type, JSON) else column.type.python_type
        fields[column.name] = (kind | None if column.nullable else kind, ...)
    name = "Ledger" + "".join(part.title() for part in table.name.removeprefix("ouro_").split("_")) + "Row"
    return create_model(name, __doc__=f"A row of {table.name}.", **fields)

"""The decision engine's records: candidates, feature records, labels, memory examples and decisions.

A candidate's key ``(repo, pin, path, function, family)`` lives in the envelope, for joining labels and
grouping folds; it is never a feature. A feature record is allow-listed and missing is not zero: every
feature of an instrument whose state is not ``ran`` is ``null``.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Literal, Self

from pydantic import Field, StringConstraints, model_validator

from ouroboros_gates.schemas._base import Record
from ouroboros_gates.schemas.common import Digest, NonEmptyStr, Sha

__all__ = [
    "Action",
    "Candidate",
    "Decision",
    "Example",
    "FeatureName",
    "FeatureRecord",
    "InstrumentState",
    "Label",
    "LabelTier",
    "Profile",
    "Provenance",
    "Scalar",
    "State",
    "Undecided",
    "Unit",
]

FeatureName = Annotated[
    str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*(\.[A-Za-z0-9_+#-]+)*$", max_length=96)
]
"""A feature name: ``<instrument>.<feature>``, e.g. ``qr.enabled_hits`` or ``lang.python``."""

Scalar = bool | int | Annotated[float, Field(allow_inf_nan=False)] | str | None
"""A feature value: bool, int, finite float, enum string, or null (missing, never zero)."""


class State(StrEnum):
    """Whether an instrument produced its features for a candidate."""

    RAN = "ran"
    NONE = "none"
    FAILED = "failed"
    NOT_APPLICABLE = "not_applicable"


class Profile(StrEnum):
    """Which instruments a program may see: local static ones, or static plus model-backed ones."""

    STATIC = "static"
    PLANE = "plane"


class Unit(StrEnum):
    """Whether a candidate is judged at one pin or as the change base..head."""

    PIN = "pin"
    DELTA = "delta"


class Candidate(Record):
    """The key of one candidate: a function and a family at a pin (envelope only, never a feature)."""

    repo: NonEmptyStr = Field(description="Normalised repository key, e.g. ``owner/name``.")
    pin: Sha = Field(description="The commit; for a delta, the head.")
    path: NonEmptyStr = Field(description="File path inside the repository.")
    function: NonEmptyStr = Field(description="The enclosing function, or ``<global>``.")
    family: NonEmptyStr = Field(description="The family id (``unknown`` allowed).")

    @property
    def key(self) -> str:
        """``repo@pin:path::function#family``, for joins and logs."""
        return f"{self.repo}@{self.pin}:{self.path}::{self.function}#{self.family}"


class InstrumentState(Record):
    """One instrument's state for a record, and the version that makes the record rebuildable."""

    state: State = Field(description="ran | none (no coverage) | failed | not_applicable.")
    version: str | None = Field(default=None, description="Ruleset digest, tool version or model id.")


def _missing_is_null(x: Mapping[str, Scalar], instruments: Mapping[str, InstrumentState]) -> None:
    """Refuse a value for a feature whose instrument did not run (a plausible zero that isn't one)."""
    wrong = sorted(
        name
        for name, value in x.items()
        if value is not None
        and (state := instruments.get(name.split(".", 1)[0])) is not None
        and state.state is not State.RAN
    )
    if wrong:
        raise ValueError(f"features of an instrument that did not run must be null: {wrong}")


class FeatureRecord(Record):
    """The allow-listed, name-invariant features of one candidate, with each instrument's state."""

    candidate: Candidate = Field(description="Envelope: the candidate this record describes.")
    language: NonEmptyStr = Field(description="The candidate's language.")
    profile: Profile = Field(default=Profile.STATIC, description="The instrument profile it was built for.")
    unit: Unit = Field(default=Unit.PIN, description="pin, or delta (then ``base`` is set).")
    base: Sha | None = Field(default=None, description="The base commit of a delta.")
    x: dict[FeatureName, Scalar] = Field(description="Feature values; null means missing, not zero.")
    instruments: dict[NonEmptyStr, InstrumentState] = Field(description="State and version per instrument.")
    feature_set_digest: Digest = Field(description="sha256 of the canonical feature list.")

    @model_validator(mode="after")
    def _coherent(self) -> Self:
        if (self.unit is Unit.DELTA) != (self.base is not None):
            raise ValueError("a delta record names its base; a pin record does not")
        _missing_is_null(self.x, self.instruments)
        return self


class LabelTier(StrEnum):
    """How a label was read: reviewed by a person, from an advisory, seeded, or from a title only."""

    REVIEWED = "reviewed"
    ADVISORY = "advisory"
    SEEDED = "seeded"
    TITLE = "title"


class Provenance(StrEnum):
    """Who produced a label."""

    HUMAN = "human"
    AGENT = "agent"
    SYNTHETIC = "synthetic"


class Label(Record):
    """A label for one candidate from an allow-listed source; its group keeps a repository in one fold."""

    candidate: Candidate = Field(description="The candidate labelled.")
    y: Literal[0, 1] = Field(description="1 an offense (vulnerable), 0 not.")
    source: NonEmptyStr = Field(description="The allow-listed source, e.g. ``pairs``.")
    source_ref: str = Field(default="", description="Case id, pair name or adjudication index.")
    group: NonEmptyStr = Field(description="Repository group key (lower-cased owner/name, merged).")
    tier: LabelTier = Field(description="reviewed | advisory | seeded | title.")
    provenance: Provenance = Field(description="human | agent | synthetic.")
    unit: Unit = Field(default=Unit.PIN, description="pin or delta.")
    weight: float = Field(default=1.0, gt=0.0, le=1.0, description="Sample weight (0.5 for benign history).")


class Example(Record):
    """A memory example: a labelled candidate's features and content-addressed excerpt (no identities)."""

    excerpt_sha: Digest = Field(description="sha256 of the excerpt blob; the example's content address.")
    x: dict[FeatureName, Scalar] = Field(description="Feature values, as in the feature record.")
    instruments: dict[NonEmptyStr, InstrumentState] = Field(
        default_factory=dict, description="Instrument states, compared block by block in retrieval."
    )
    y: Literal[0, 1] = Field(description="The label.")
    group: NonEmptyStr = Field(description="Repository group, for the balance rule and the boundary.")
    language: NonEmptyStr = Field(description="The excerpt's language.")
    family: NonEmptyStr = Field(description="The candidate's family.")

    @model_validator(mode="after")
    def _coherent(self) -> Self:
        _missing_is_null(self.x, self.instruments)
        return self


class Action(StrEnum):
    """The decider's answer for a candidate."""

    BLOCK = "BLOCK"
    ADVISORY = "ADVISORY"
    DROP = "DROP"


class Undecided(StrEnum):
    """Why a candidate has no calibrated decision."""

    DEADLINE = "deadline"
    PARSE_FAILED = "parse_failed"
    BUDGET_EXHAUSTED = "budget_exhausted"
    INSUFFICIENT_DATA = "insufficient_data"
    NO_PROGRAM = "no_program"
    MODEL_FAILED = "model_failed"


class Decision(Record):
    """BLOCK / ADVISORY / DROP for one candidate, with its calibrated p, rationale and cost."""

    candidate: Candidate = Field(description="The candidate decided.")
    action: Action = Field(description="BLOCK, ADVISORY or DROP.")
    p: float | None = Field(ge=0.0, le=1.0, description="Calibrated probability; None when undecided.")
    rationale: str = Field(default="", description="The majority rationale.")
    program_id: Digest = Field(description="Digest of the program artifact that decided.")
    model: str | None = Field(default=None, description="Chat model id; None for the memory-vote program.")
    cost_usd: float = Field(default=0.0, ge=0.0, allow_inf_nan=False, description="Metered spend.")
    cached: bool = Field(default=False, description="Every answer came from the response cache ($0).")
    undecided: Undecided | None = Field(default=None, description="Why it is unscored, if it is.")
    verdict: Literal["vulnerable", "not_vulnerable", "unsure"] | None = Field(
        default=None, description="The majority verdict (None when no program answered)."
    )
    cited_lines: tuple[int, ...] = Field(default=(), description="Lines of the code the rationale cites.")
    signals: tuple[str, ...] = Field(
        default=(), description="Signals the rationale names (checked against x)."
    )
    offered: bool = Field(default=False, description="Whether BLOCK is offered for the family.")
    variant: str | None = Field(default=None, description="``llm-program`` or ``memory-vote``.")
    retrieval: str | None = Field(default=None, description="``signals+embeddings`` or ``signals_only``.")
    priors: tuple[str, ...] = Field(
        default=(), description="The framework and library priors that were on for the candidate's file."
    )
    evidence: str | None = Field(
        default=None,
        description="What the instruments proved that bounds p: a live flow, or only guarded sinks.",
    )

    @model_validator(mode="after")
    def _undecided_is_advisory(self) -> Self:
        if self.p is None and self.undecided is None:
            raise ValueError("a decision without p must say why it is undecided")
        if self.undecided is Undecided.DEADLINE and (
            self.action is not Action.ADVISORY or self.p is not None
        ):
            raise ValueError("a candidate undecided by the deadline is ADVISORY-unscored (p None)")
        return self

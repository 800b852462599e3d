"""Values shared by every message family: arguments, spans, facts, severities, scopes and time.

A fact is what an extractor emits and what a proof is made of: ``predicate(args…)`` at a source span.
Timestamps are always timezone-aware and stored in UTC, so a replayed log renders the same bytes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, Field, StringConstraints

from ouroboros_gates.schemas._base import Record
from ouroboros_gates.schemas.kinds import RUN_ID_MAX_LENGTH, RUN_ID_PATTERN

__all__ = [
    "NULL_COMMIT",
    "Arg",
    "Digest",
    "Fact",
    "Identifier",
    "MinerName",
    "NonEmptyStr",
    "Number",
    "RunId",
    "Scope",
    "Severity",
    "Sha",
    "Span",
    "Text",
    "Timestamp",
    "utc",
]


def utc(moment: datetime) -> datetime:
    """The same instant in UTC; a naive datetime is refused rather than guessed."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("datetime must be timezone-aware (give an offset such as +00:00 or Z)")
    return moment.astimezone(UTC)


# Pydantic rejects a naive input with "Input should have timezone info" before ``utc`` runs.
Timestamp = Annotated[AwareDatetime, AfterValidator(utc)]
"""A timezone-aware instant, normalised to UTC."""

NonEmptyStr = Annotated[str, StringConstraints(min_length=1)]
"""A string with at least one character."""

Identifier = Annotated[str, StringConstraints(pattern=r"^[a-z][A-Za-z0-9_]*$", max_length=128)]
"""A Datalog predicate or rule name: a lower-case letter, then letters, digits and underscores."""

MinerName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$", max_length=64)]
"""A miner's name (its folder under ``miners/`` or its ``NAME``), e.g. ``draft-pr-late``."""

RunId = Annotated[str, StringConstraints(pattern=RUN_ID_PATTERN, max_length=RUN_ID_MAX_LENGTH)]
"""A harness run id: one directory name under the state root (no separators, so it cannot escape it)."""

Digest = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32,64}$")]
"""A lower-case hex digest: a sha256 (64) or a ``content_id`` (32)."""

Sha = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{7,64}$")]
"""A git object name, abbreviated (>= 7) or full (40 for SHA-1, 64 for SHA-256)."""

NULL_COMMIT = "0" * 40
"""git's null object name: the remote's tip of a ref it does not have yet, and the local tip of a deletion."""


class Text(Record):
    """A textual argument of a fact, written ``{"text": "..."}``."""

    # Excluded from dumps so the wire form stays ``{"text": "..."}`` (docs/loop.md, "Wire form"); still
    # accepted on input.
    schema_version: int = Field(default=1, ge=1, exclude=True, description="Version of this record's shape.")
    text: str = Field(description="The argument's text, verbatim (may be empty).")


class Number(Record):
    """A numeric argument of a fact, written ``{"number": 1.5}``."""

    schema_version: int = Field(default=1, ge=1, exclude=True, description="Version of this record's shape.")
    number: float = Field(
        strict=True, allow_inf_nan=False, description="The argument's value; finite (a bool is refused)."
    )


Arg = Text | Number
"""An argument of a fact or a finding's subject: ``Text`` or ``Number``."""


class Span(Record):
    """A source location: a file and a 1-based line."""

    file: NonEmptyStr = Field(description="Path of the source file, as the reader named it.")
    line: int = Field(ge=1, description="1-based line number in that file.")


class Fact(Record):
    """One extracted or derived fact ``predicate(args…)``, with the span it was read from."""

    predicate: Identifier = Field(description="Predicate name, e.g. ``gated`` or ``score``.")
    args: tuple[Arg, ...] = Field(default=(), description="Arguments, in order.")
    span: Span | None = Field(default=None, description="Where the fact was read; None for a constant.")


class Severity(StrEnum):
    """How bad an offense is: S0 a gate escape … S3 an offense found only by mining."""

    S0 = "SEVERITY_S0"
    S1 = "SEVERITY_S1"
    S2 = "SEVERITY_S2"
    S3 = "SEVERITY_S3"


class Scope(StrEnum):
    """Who a gate holds for: any harness user (generic) or one operator (tenant, never exported)."""

    GENERIC = "generic"
    TENANT = "tenant"

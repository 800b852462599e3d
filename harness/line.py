"""What the readers make of a line before the contract types it: plain values, no pydantic.

Every format reader builds ``LineEvent``s; ``Reader`` iterates them typed, as the contract's
``HarnessEvent`` (each validated; a line with a value that cannot be typed is malformed), or plain
(``Reader.plain``), which is what counting a log needs: ``ouro corpus stats``, a run's summary and the
h-fleet reader's sessions load no model. The readers' own conversions (``context.text``, ``number``,
``timestamp``, ``usage``) already give every field its type, so both ways read the same lines.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from ouroboros_gates.schemas.kinds import RUN_ID_MAX_LENGTH, RUN_ID_PATTERN, HarnessKind

if TYPE_CHECKING:
    from ouroboros_gates.schemas import HarnessEvent, Span, Usage

__all__ = ["LineEvent", "Tokens", "Where", "valid_run_id"]

_RUN_ID = re.compile(RUN_ID_PATTERN)


def valid_run_id(run: str) -> bool:
    """Whether ``run`` is a run id as the contract's ``RunId`` has it."""
    return isinstance(run, str) and len(run) <= RUN_ID_MAX_LENGTH and _RUN_ID.fullmatch(run) is not None


class Where(NamedTuple):
    """A file and a 1-based line: the plain form of the contract's ``Span``."""

    file: str
    line: int


@dataclass(frozen=True, slots=True)
class Tokens:
    """Token usage counts: the plain form of the contract's ``Usage`` (the same names)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    @property
    def prompt_tokens(self) -> int:
        """input + cache_creation + cache_read: the denominator of the cache hit ratio h."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def as_dict(self) -> dict[str, int]:
        """The four counts by name."""
        return asdict(self)

    def typed(self) -> Usage:
        """As the contract's ``Usage``."""
        from ouroboros_gates.schemas import Usage

        return Usage(**self.as_dict())


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ sets each field the slow way, per event
class LineEvent:
    """One event of a line, as its format's reader made it: ``HarnessEvent``'s fields, plain."""

    run: str
    kind: HarnessKind
    span: Where
    raw: dict[str, Any]
    session: str | None = None
    subtype: str | None = None
    tool: str | None = None
    tool_use_id: str | None = None
    tool_input: dict[str, Any] | None = None
    agent: str | None = None
    is_error: bool = False
    result_text: str | None = None
    relay: bool = False
    usage: Tokens | None = None
    total_cost_usd: float | None = None
    timestamp: datetime | None = None

    def typed(self, span: Span | None = None) -> HarnessEvent:
        """The contract's event (validated: a value it refuses raises ``ValidationError``); ``span``: the
        line's ``Span`` when the caller made it once for all the line's events."""
        from ouroboros_gates.schemas import HarnessEvent, Span

        values: dict[str, Any] = {"run": self.run, "kind": self.kind, "raw": self.raw}
        values["span"] = span if span is not None else Span(file=self.span.file, line=self.span.line)
        values.update(self._given())
        if self.usage is not None:
            values["usage"] = self.usage.typed()
        return HarnessEvent(**values)

    def _given(self) -> dict[str, Any]:
        """The optional fields set away from their defaults (one left at its default is not given: the model
        has it already)."""
        given = {}
        for name in _OPTIONAL:
            value = getattr(self, name)
            if value is not None and value is not False:
                given[name] = value
        return given


MODEL_FIELDS = tuple(f.name for f in fields(LineEvent))
"""``HarnessEvent``'s fields but ``schema_version``: a test holds the two lists equal."""
_OPTIONAL = tuple(name for name in MODEL_FIELDS if name not in ("run", "kind", "span", "raw", "usage"))

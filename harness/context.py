"""What every format reader shares: the line being read, the state kept across a run's lines, and the
lenient conversions from harness JSON to typed values (a wrong-typed field is dropped, never fatal).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

from ouroboros_gates.harness.line import LineEvent, Tokens, Where
from ouroboros_gates.schemas.kinds import HarnessKind

__all__ = [
    "REDACTED",
    "LineContext",
    "ReadState",
    "UsageLedger",
    "array",
    "as_object",
    "block_events",
    "blocks",
    "field_at",
    "first_item",
    "nonzero_exit",
    "number",
    "response_key",
    "result_text",
    "text",
    "text_parts",
    "timestamp",
    "usage",
]

REDACTED = "REDACTED"
_USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


class LineContext(NamedTuple):
    """The line an event comes from: its run, span, whole JSON object and envelope timestamp, if any (a named
    tuple: one or two are made for every line read)."""

    run: str
    span: Where
    raw: dict[str, Any]
    timestamp: datetime | None = None

    def event(self, kind: HarnessKind, **fields: Any) -> LineEvent:
        """An event of this line; ``fields`` set the typed attributes, the raw object is kept."""
        fields.setdefault("timestamp", self.timestamp)
        return LineEvent(run=self.run, kind=kind, span=self.span, raw=self.raw, **fields)

    def timed(self, moment: datetime | None) -> LineContext:
        """This line at ``moment``, when there is one."""
        return self if moment is None else LineContext(self.run, self.span, self.raw, moment)

    def dated(self, value: Any) -> LineContext:
        """This line at the instant ``value`` says, unless its envelope dated it already."""
        return self if self.timestamp is not None else self.timed(timestamp(value))


class UsageLedger:
    """Counts each API response's usage once, although a transcript repeats it on every line of it.

    One response is split over several lines (one per content block) that repeat its ``usage``, and a
    later line may carry a larger ``output_tokens`` (streaming). The ledger keeps the field-wise maximum
    per response and hands out only the increase, so summing the usage of every event counts each
    response once, at its final size.
    """

    def __init__(self) -> None:
        self._seen: dict[tuple[str | None, str | None], Tokens] = {}

    def add(self, key: tuple[str | None, str | None] | None, reported: Tokens) -> Tokens | None:
        """The part of ``reported`` not yet counted for response ``key`` (None when nothing is new).

        A key of None (both ids absent or redacted) cannot be matched to its siblings: the line counts on
        its own, because merging distinct responses would lose usage silently.
        """
        if key is None:
            return reported
        before = self._seen.get(key)
        if before is None:
            self._seen[key] = reported
            return reported
        merged = {name: max(getattr(before, name), getattr(reported, name)) for name in _USAGE_FIELDS}
        increase = {name: merged[name] - getattr(before, name) for name in _USAGE_FIELDS}
        if not any(increase.values()):
            return None
        self._seen[key] = Tokens(**merged)
        return Tokens(**increase)


def response_key(message_id: Any, request_id: Any) -> tuple[str | None, str | None] | None:
    """The de-duplication key of an API response; redacted or missing ids take no part in it."""
    parts = (_key_part(message_id), _key_part(request_id))
    return None if parts == (None, None) else parts


def _key_part(value: Any) -> str | None:
    """An id that takes part in a response's key: a non-empty string, not redacted."""
    return value if isinstance(value, str) and value and value != REDACTED else None


@dataclass
class ReadState:
    """State kept across one run's lines: tool names by call id, the usage ledger, the own transcripts."""

    tool_names: dict[str, str] = field(default_factory=dict)
    ledger: UsageLedger = field(default_factory=UsageLedger)
    own_agents: frozenset[str] = frozenset()
    """The subagents whose own transcripts the run reads: their relayed lines repeat them."""
    by_event: dict[int, str] = field(default_factory=dict)
    """Tool call ids by the id of the event that made the call (OpenHands: an observation names its
    ``cause``)."""
    open_turns: dict[tuple[str, str | None], Where] = field(default_factory=dict)
    """Per file and session, the stream-json line of a turn that has no ``result`` line yet (a cut run)."""

    def name_of(self, tool_use_id: str | None) -> str | None:
        """The tool a result answers, when its call was seen earlier in the run."""
        return self.tool_names.get(tool_use_id) if tool_use_id else None

    def called(self, tool_use_id: str | None, name: str | None) -> None:
        """Remember a call's tool name, so its results can be named."""
        if tool_use_id and name:
            self.tool_names[tool_use_id] = name


def usage(value: Any) -> Tokens | None:
    """Token usage from a provider ``usage`` object; non-integer or negative counts read as 0."""
    if not isinstance(value, dict):
        return None
    return Tokens(**{name: _count(value.get(name)) for name in _USAGE_FIELDS})


def _count(value: Any) -> int:
    """A token count: a positive integer (a bool is not one), else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def number(value: Any) -> float | None:
    """A finite, non-negative JSON number, else None (a bool is not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    result = float(value)
    return result if 0.0 <= result < float("inf") else None


def array(value: Any) -> list[Any]:
    """A JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def as_object(value: Any) -> dict[str, Any] | None:
    """A JSON object, else None."""
    return value if isinstance(value, dict) else None


def first_item(value: Any) -> Any:
    """The first element of a non-empty JSON array, else None."""
    return value[0] if isinstance(value, list) and value else None


def field_at(value: Any, *path: str) -> Any:
    """The value at ``path`` in nested JSON objects (``field_at(doc, "extras", "metadata")``); None where a
    value along the way is not an object."""
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def nonzero_exit(code: Any) -> bool:
    """Whether ``code`` is an integer exit code other than 0 (a bool is not one)."""
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


def text(value: Any) -> str | None:
    """A non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def timestamp(value: Any) -> datetime | None:
    """An ISO 8601 instant with a zone (``Z`` accepted); anything else is None rather than guessed."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if parsed.tzinfo is None or parsed.utcoffset() is None:
            return None
        return parsed.astimezone(UTC)  # year 1 or 9999 with an offset cannot be moved to UTC
    except (ValueError, OverflowError):
        return None


def blocks(message: Any) -> list[dict[str, Any]]:
    """The object content blocks of a message (a string content has none)."""
    content = message.get("content") if isinstance(message, dict) else None
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def block_events(ctx: LineContext, state: ReadState, message: Any, **common: Any) -> Iterator[LineEvent]:
    """One event per ``tool_use`` and ``tool_result`` block of a message (stream-json and transcripts)."""
    for block in blocks(message):
        kind = block.get("type")
        if kind == "tool_use":
            call_id, name = text(block.get("id")), text(block.get("name"))
            state.called(call_id, name)
            yield ctx.event(
                HarnessKind.TOOL_CALL,
                tool=name,
                tool_use_id=call_id,
                tool_input=as_object(block.get("input")),
                **common,
            )
        elif kind == "tool_result":
            call_id = text(block.get("tool_use_id"))
            yield ctx.event(
                HarnessKind.TOOL_RESULT,
                tool=state.name_of(call_id),
                tool_use_id=call_id,
                is_error=block.get("is_error") is True,
                result_text=result_text(block.get("content")),
                **common,
            )


def result_text(content: Any) -> str | None:
    """The text of a tool result's ``content``: the string itself, or its ``text`` blocks joined by newlines
    (an image block has none); None when there is no text."""
    if isinstance(content, str):
        return content or None
    if isinstance(content, dict):
        content = [content]
    parts = text_parts(content) if isinstance(content, list) else []
    return "\n".join(parts) or None


def text_parts(content: list[Any]) -> list[str]:
    """The ``text`` of each block of ``content`` that has one (an image block has none)."""
    return [
        block["text"] for block in content if isinstance(block, dict) and isinstance(block.get("text"), str)
    ]

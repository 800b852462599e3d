"""Harness events as the corpus readers type them, and the summary of one recorded run.

Every reader (CSF envelopes, Claude Code stream-json, transcripts, hook payloads) yields ``HarnessEvent``s
with the exact span of the line they came from. The typed fields are the few the loop reads; the line's
whole payload is kept in ``raw`` as-is, because harness payloads grow with every release and an unknown
field must be kept, never rejected.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import Field, model_validator

from ouroboros_gates.schemas._base import Record
from ouroboros_gates.schemas.common import RunId, Span, Timestamp
from ouroboros_gates.schemas.kinds import HarnessKind

__all__ = ["HarnessEvent", "HarnessKind", "RunSummary", "Usage"]


class Usage(Record):
    """Token usage as the model provider reports it (absent counts are 0)."""

    input_tokens: int = Field(default=0, ge=0, description="Uncached input tokens.")
    output_tokens: int = Field(default=0, ge=0, description="Output tokens.")
    cache_creation_input_tokens: int = Field(default=0, ge=0, description="Input tokens written to cache.")
    cache_read_input_tokens: int = Field(default=0, ge=0, description="Input tokens read from cache.")

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    @property
    def prompt_tokens(self) -> int:
        """input + cache_creation + cache_read: the denominator of the cache hit ratio h."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


class HarnessEvent(Record):
    """One line of a harness log, typed, with its source span and its payload kept verbatim."""

    run: RunId = Field(description="The run (directory) the line belongs to.")
    session: str | None = Field(default=None, description="The harness or Claude Code session id.")
    kind: HarnessKind = Field(description="What the line is.")
    subtype: str | None = Field(
        default=None, description="The line's own subtype: hook event name, ``init``, ``success``…"
    )
    tool: str | None = Field(default=None, description="Tool name of a tool call or result.")
    tool_use_id: str | None = Field(default=None, description="Joins a tool result to its call.")
    tool_input: dict[str, Any] | None = Field(
        default=None, description="A tool call's input as the harness logged it (its arguments, verbatim)."
    )
    agent: str | None = Field(
        default=None,
        description="The subagent whose work the line records (sidechain); None for the main agent.",
    )
    is_error: bool = Field(default=False, description="A tool result that is an error, or a gate denial.")
    result_text: str | None = Field(
        default=None,
        description="A tool result's text as the format has it: a tool_result block's content "
        "(its text blocks joined), a PostToolUse hook's tool_response (stdout, then stderr), "
        "a PostToolUseFailure hook's error.",
    )
    relay: bool = Field(
        default=False,
        description="The line relays a subagent's line into its parent session "
        "(a transcript ``progress`` line); when the run also reads that subagent's own transcript, "
        "the relay repeats it (``Reader.repeats``).",
    )
    usage: Usage | None = Field(
        default=None,
        description="Token usage this line adds to its run: an API response's usage counts once, "
        "however many lines repeat it, so summing over events is right.",
    )
    total_cost_usd: float | None = Field(
        default=None,
        ge=0.0,
        allow_inf_nan=False,
        description="Cumulative cost within one process; restarts from 0 when the process is reopened.",
    )
    timestamp: Timestamp | None = Field(default=None, description="When the line was written, if it says.")
    span: Span = Field(description="The file and line it was read from.")
    raw: dict[str, Any] = Field(
        default_factory=dict, description="The line's JSON object as read; unknown fields kept."
    )


class RunSummary(Record):
    """What reading one run's ``events.jsonl`` found: lines, tool calls, errors, usage and cost."""

    run: RunId = Field(description="The run summarised.")
    lines: int = Field(ge=0, description="Lines read, malformed ones included.")
    malformed: int = Field(ge=0, description="Lines that could not be typed (reported with file:line).")
    tool_calls: int = Field(ge=0, description="Tool calls.")
    tool_errors: int = Field(
        ge=0, description="Tool results that were errors or gate denials (a truncated log may lack the call)."
    )
    usage: Usage = Field(
        default_factory=Usage, description="Usage summed over the run, each API response once."
    )
    cache_reported: bool = Field(
        default=True,
        description="False when the run's format reports no cache counts: its h_r is unknown, not 0.",
    )
    cost_usd: float | None = Field(
        default=None, ge=0.0, allow_inf_nan=False, description="Cost folded from total_cost_usd, if any."
    )
    started_at: Timestamp | None = Field(default=None, description="Earliest timestamp seen.")
    ended_at: Timestamp | None = Field(default=None, description="Latest timestamp seen.")

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.malformed > self.lines:
            raise ValueError(f"malformed ({self.malformed}) exceeds lines ({self.lines})")
        if self.started_at and self.ended_at and self.ended_at < self.started_at:
            raise ValueError("ended_at is before started_at")
        return self

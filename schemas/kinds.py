"""The kinds of harness line and the run-id rule, apart from the models: the readers type lines with them
before anything of pydantic is loaded (``ouro corpus stats`` counts a log without the contract's models)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["RUN_ID_MAX_LENGTH", "RUN_ID_PATTERN", "HarnessKind"]

RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$"
"""A harness run id: one directory name under the state root (no separators, so it cannot escape it)."""
RUN_ID_MAX_LENGTH = 128


class HarnessKind(StrEnum):
    """What a harness line is: the stream-json message types, tool calls and results, hooks, other."""

    SYSTEM = "system"
    ASSISTANT = "assistant"
    USER = "user"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    RESULT = "result"
    HOOK = "hook"
    OTHER = "other"

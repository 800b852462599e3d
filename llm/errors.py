"""Errors of the model client.

    OuroError                     (schemas.errors)
    └── LlmError                  root of every error the model client raises
        ├── TransientLlmError     also a TransientError: timeout, connection refused or reset, 429, 5xx
        ├── ReplyParseError       the reply is empty, not JSON, or JSON outside the schema; carries the text
        ├── AccountError          401, 402 or 403, or a working-looking zero (usage missing or zero)
        ├── BudgetExhausted       a ceiling (USD or calls) is reached; carries spent and ceiling
        └── ModelRequestError     any other refusal (400, 404, an unknown model); retrying cannot help

``TransientLlmError`` is the only one a task should retry. ``BudgetExhausted`` ends a run ``unfinished``,
``AccountError`` ends it ``failed``. httpx's exceptions are translated in ``llm/_wire.py`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ouroboros_gates.schemas.errors import OuroError, PermanentError, TransientError

if TYPE_CHECKING:
    from ouroboros_gates.llm._types import ChatReply

__all__ = [
    "AccountError",
    "BudgetExhausted",
    "LlmError",
    "ModelRequestError",
    "ReplyParseError",
    "TransientLlmError",
]


class LlmError(OuroError):
    """Root of every error the model client raises."""


class TransientLlmError(LlmError, TransientError):
    """A model call that may succeed if retried: timeout, connection error, 429 or 5xx."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ReplyParseError(LlmError, PermanentError):
    """A reply that is empty, is not JSON, or does not match the requested schema; ``text`` is the raw
    reply, ``reply`` the whole answer (usage, cost, ``cached``) when the server sent one: a bad answer is
    still paid."""

    def __init__(self, message: str, *, text: str, reply: ChatReply | None = None) -> None:
        super().__init__(message)
        self.text = text
        self.reply = reply


class AccountError(LlmError, PermanentError):
    """The provider refuses the account (401, 402, 403), or its replies look like work but carry no usage."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class BudgetExhausted(LlmError, PermanentError):
    """A ceiling is reached; ``kind`` is ``usd`` or ``calls``, ``spent`` and ``ceiling`` in that unit."""

    def __init__(self, kind: str, spent: float, ceiling: float) -> None:
        unit = "$" if kind == "usd" else ""
        super().__init__(f"{kind} ceiling reached: spent {unit}{spent:g} of {unit}{ceiling:g}")
        self.kind = kind
        self.spent = spent
        self.ceiling = ceiling


class ModelRequestError(LlmError, PermanentError):
    """The provider rejected the request itself (400, 404, unknown model): retrying cannot help."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

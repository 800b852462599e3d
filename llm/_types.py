"""The values the model client speaks in: where a model is, what is asked of it, what it answered."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

__all__ = ["Api", "ChatReply", "ChatRequest", "Endpoint", "JsonMode", "Message", "Usage"]

Api = Literal["openai", "ollama"]
JsonMode = Literal["json_schema", "json_object"]


class Message(TypedDict):
    """One chat message: ``{"role": "system" | "user" | "assistant", "content": str}``."""

    role: str
    content: str


@dataclass(frozen=True)
class Endpoint:
    """A model behind an API: ``openai`` (``base_url`` ends in ``/v1``) or ``ollama`` (the server root).

    ``extra_body`` is merged into every chat request (e.g. DeepSeek's ``thinking: {type: disabled}``);
    ``json_mode`` is how an OpenAI-compatible server is asked for JSON: ``json_schema`` (constrained by the
    schema: vLLM, llama.cpp, OpenRouter) or ``json_object`` (any JSON, the schema stated in the prompt:
    DeepSeek). The reply is checked against the schema either way.
    """

    api: Api
    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 60.0
    keep_alive_s: float | None = None
    extra_body: Mapping[str, Any] | None = field(default=None, hash=False)
    json_mode: JsonMode = "json_schema"

    def __post_init__(self) -> None:
        if self.api not in ("openai", "ollama"):
            raise ValueError(f"api must be 'openai' or 'ollama', not {self.api!r}")
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))


@dataclass(frozen=True)
class ChatRequest:
    """One chat call; ``schema`` asks for JSON matching it, ``sample`` is the index among repeated samples.

    ``attempt`` counts retries of a reply that did not parse: the response cache replays a bad reply as the
    same ``ReplyParseError``, so a retry that should reach the model again says ``attempt=1``.
    """

    messages: tuple[Message, ...]
    schema: dict[str, Any] | None = None
    temperature: float = 0.0
    sample: int = 0
    max_tokens: int | None = None
    attempt: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(self.messages))
        if not self.messages:
            raise ValueError("a chat request needs at least one message")
        for message in self.messages:
            if not _is_message(message):
                raise ValueError(f"a message is {{'role', 'content': str}}, not {message!r}")


def _is_message(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` holds a role and a text content, and nothing else."""
    return set(message) == {"role", "content"} and isinstance(message["content"], str)


@dataclass(frozen=True)
class Usage:
    """Tokens of one call, Anthropic-style: ``input_tokens`` excludes the cache reads and writes."""

    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        """Every token the call counted."""
        return self.input_tokens + self.cache_read_tokens + self.cache_creation_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_creation_tokens + other.cache_creation_tokens,
            self.output_tokens + other.output_tokens,
        )


@dataclass(frozen=True)
class ChatReply:
    """A model's answer: raw ``text``, ``data`` parsed when a schema was asked, usage and what it cost."""

    text: str
    data: Any | None
    usage: Usage
    model: str
    cost_usd: float = 0.0
    cached: bool = False
    wall_s: float = 0.0
    load_s: float | None = None

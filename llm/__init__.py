"""The fleet's one model client: chat and embeddings over httpx for OpenAI-compatible servers and Ollama,
model manifests with prices, the metered client (USD and call ceilings, the smoke check) and the response
cache. Pure of Celery and SQLAlchemy; every transport is injectable."""

from __future__ import annotations

from ouroboros_gates.llm._types import Api, ChatReply, ChatRequest, Endpoint, JsonMode, Message, Usage
from ouroboros_gates.llm.budget import Budget
from ouroboros_gates.llm.cache import ResponseCache, cache_key, canonical_json
from ouroboros_gates.llm.chat import ChatClient, parse_json_reply, usage_from_ollama, usage_from_openai
from ouroboros_gates.llm.embed import EmbeddingClient, normalise_text, text_digest
from ouroboros_gates.llm.endpoint import embedder_from_settings, endpoint_from_settings, metered_from_settings
from ouroboros_gates.llm.errors import (
    AccountError,
    BudgetExhausted,
    LlmError,
    ModelRequestError,
    ReplyParseError,
    TransientLlmError,
)
from ouroboros_gates.llm.manifest import (
    MANIFEST_DIR,
    ModelManifest,
    Prices,
    find_manifest,
    list_manifests,
    load_manifest,
)
from ouroboros_gates.llm.metered import Chat, MeteredClient, check_usage
from ouroboros_gates.llm.pool import MAX_IN_FLIGHT, run_bounded

__all__ = [
    "MANIFEST_DIR",
    "MAX_IN_FLIGHT",
    "AccountError",
    "Api",
    "Budget",
    "BudgetExhausted",
    "Chat",
    "ChatClient",
    "ChatReply",
    "ChatRequest",
    "EmbeddingClient",
    "Endpoint",
    "JsonMode",
    "LlmError",
    "Message",
    "MeteredClient",
    "ModelManifest",
    "ModelRequestError",
    "Prices",
    "ReplyParseError",
    "ResponseCache",
    "TransientLlmError",
    "Usage",
    "cache_key",
    "canonical_json",
    "check_usage",
    "embedder_from_settings",
    "endpoint_from_settings",
    "find_manifest",
    "list_manifests",
    "load_manifest",
    "metered_from_settings",
    "normalise_text",
    "parse_json_reply",
    "run_bounded",
    "text_digest",
    "usage_from_ollama",
    "usage_from_openai",
]

"""A chat model over HTTP: OpenAI-compatible ``/chat/completions`` (DeepSeek, OpenRouter, vLLM, llama.cpp) or
Ollama's ``/api/chat``, with JSON constrained by a schema and the provider's usage read into ``Usage``."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import httpx

from ouroboros_gates.llm._schema import violation
from ouroboros_gates.llm._types import ChatReply, ChatRequest, Endpoint, Usage
from ouroboros_gates.llm._wire import http_client, post_json
from ouroboros_gates.llm.errors import ReplyParseError

__all__ = ["ChatClient", "finish_reply", "parse_json_reply", "usage_from_ollama", "usage_from_openai"]

_FENCE = re.compile(r"\A```(?:json)?\s*\n(.*?)\n?```\s*\Z", re.DOTALL)


class ChatClient:
    """Chat with one endpoint; ``transport`` replaces the network (tests, proxies)."""

    def __init__(self, endpoint: Endpoint, transport: httpx.BaseTransport | None = None) -> None:
        self.endpoint = endpoint
        self._http = http_client(endpoint, transport)

    def chat(self, request: ChatRequest) -> ChatReply:
        """One call; raises ``ReplyParseError`` on an empty reply or JSON that does not match the schema."""
        if self.endpoint.api == "ollama":
            payload, wall_s = post_json(self._http, "/api/chat", self._ollama_body(request))
            text, usage, load_s = _read_ollama(payload)
        else:
            payload, wall_s = post_json(self._http, "/chat/completions", self._openai_body(request))
            text, usage, load_s = _read_openai(payload)
        model = str(payload.get("model") or self.endpoint.model)
        reply = ChatReply(text=text, data=None, usage=usage, model=model, wall_s=wall_s, load_s=load_s)
        return finish_reply(reply, request)

    def close(self) -> None:
        """Close the pooled connections."""
        self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _openai_body(self, request: ChatRequest) -> dict[str, Any]:
        messages: list[Any] = list(request.messages)
        body: dict[str, Any] = {
            "model": self.endpoint.model,
            "temperature": request.temperature,
            "stream": False,
        }
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        body.update(self.endpoint.extra_body or {})
        if request.schema is not None:
            messages = self._ask_for_json(body, messages, request.schema)
        body["messages"] = messages
        return body

    def _ask_for_json(self, body: dict[str, Any], messages: list[Any], schema: dict[str, Any]) -> list[Any]:
        """Set the response format the endpoint's JSON mode asks with; the messages to send (in
        ``json_object`` mode the server sees no schema, so it is stated in them)."""
        if self.endpoint.json_mode == "json_object":
            body["response_format"] = {"type": "json_object"}
            return _state_schema(messages, schema)
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "reply", "schema": schema, "strict": True},
        }
        return messages

    def _ollama_body(self, request: ChatRequest) -> dict[str, Any]:
        options: dict[str, Any] = {"temperature": request.temperature}
        if request.max_tokens is not None:
            options["num_predict"] = request.max_tokens
        body: dict[str, Any] = {
            "model": self.endpoint.model,
            "messages": list(request.messages),
            "stream": False,
            "options": options,
        }
        body.update(self.endpoint.extra_body or {})
        if request.schema is not None:
            body["format"] = request.schema
        if self.endpoint.keep_alive_s is not None:
            body["keep_alive"] = self.endpoint.keep_alive_s  # a number is seconds to Ollama
        return body


def finish_reply(reply: ChatReply, request: ChatRequest) -> ChatReply:
    """The reply with ``data`` parsed when a schema was asked; ``ReplyParseError`` (carrying the reply)
    when it is empty or does not parse. A replay from the cache passes through here too, so it fails the
    same way."""
    try:
        if request.schema is not None:
            return replace(reply, data=parse_json_reply(reply.text, request.schema))
        if not reply.text.strip():
            raise ReplyParseError(f"{reply.model}: empty reply", text=reply.text)
    except ReplyParseError as exc:
        exc.reply = reply
        raise
    return reply


def parse_json_reply(text: str, schema: dict[str, Any]) -> Any:
    """The JSON value of a reply (a fenced block is unwrapped), checked against ``schema``."""
    stripped = text.strip()
    if not stripped:
        raise ReplyParseError("empty reply where JSON was asked", text=text)
    fenced = _FENCE.match(stripped)
    try:
        data = json.loads(fenced.group(1) if fenced else stripped)
    except ValueError as exc:
        raise ReplyParseError(f"reply is not JSON: {exc}", text=text) from exc
    problem = violation(data, schema)
    if problem is not None:
        raise ReplyParseError(f"reply does not match the schema at {problem}", text=text)
    return data


def usage_from_openai(usage: dict[str, Any] | None) -> Usage:
    """OpenAI-style usage: ``prompt_tokens`` include cache reads (``prompt_tokens_details.cached_tokens``, or
    DeepSeek's ``prompt_cache_hit_tokens``); OpenRouter may add ``cache_write_tokens``."""
    if not usage:
        return Usage()
    details = usage.get("prompt_tokens_details") or {}
    prompt = _int(usage.get("prompt_tokens"))
    if "prompt_cache_hit_tokens" in usage:
        read = _int(usage.get("prompt_cache_hit_tokens"))
    else:
        read = _int(details.get("cached_tokens"))
    write = _int(details.get("cache_write_tokens"))
    return Usage(
        input_tokens=max(prompt - read - write, 0),
        cache_read_tokens=read,
        cache_creation_tokens=write,
        output_tokens=_int(usage.get("completion_tokens")),
    )


def usage_from_ollama(payload: dict[str, Any]) -> tuple[Usage, float | None]:
    """Ollama's counts (``prompt_eval_count`` omits a reused prompt cache) and ``load_duration`` in
    seconds."""
    usage = Usage(
        input_tokens=_int(payload.get("prompt_eval_count")), output_tokens=_int(payload.get("eval_count"))
    )
    load_ns = payload.get("load_duration")
    return usage, (load_ns / 1e9 if isinstance(load_ns, int | float) else None)


def _state_schema(messages: list[Any], schema: dict[str, Any]) -> list[Any]:
    """The messages with the schema stated after the last one: JSON-object mode needs the word JSON in the
    prompt and sees no schema otherwise. Appended last, so the shared prefix stays byte-identical."""
    last = dict(messages[-1])
    last["content"] += f"\n\nAnswer with one JSON object matching this JSON Schema: {json.dumps(schema)}"
    return [*messages[:-1], last]


def _read_openai(payload: dict[str, Any]) -> tuple[str, Usage, float | None]:
    choices = payload.get("choices") or [{}]
    message = choices[0].get("message") or {}
    return str(message.get("content") or ""), usage_from_openai(payload.get("usage")), None


def _read_ollama(payload: dict[str, Any]) -> tuple[str, Usage, float | None]:
    message = payload.get("message") or {}
    usage, load_s = usage_from_ollama(payload)
    return str(message.get("content") or ""), usage, load_s


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

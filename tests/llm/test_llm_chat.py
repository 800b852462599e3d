"""The chat client against the scripted server: both APIs, JSON by schema, usage, and every failure typed."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from fake_model_server import MALFORMED

from ouroboros_gates.llm import (
    AccountError,
    ChatClient,
    ChatRequest,
    Endpoint,
    ModelRequestError,
    ReplyParseError,
    TransientLlmError,
    Usage,
    parse_json_reply,
    usage_from_openai,
)
from ouroboros_gates.schemas.errors import TransientError

VERDICT = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["vulnerable", "not_vulnerable", "unsure"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["verdict", "confidence"],
    "additionalProperties": False,
}


def endpoint(server: Any, api: str, **kw: Any) -> Endpoint:
    base = f"{server.url}/v1" if api == "openai" else server.url
    return Endpoint(api=api, base_url=base, model="fake-model", **kw)  # type: ignore[arg-type]


def ask(text: str, **kw: Any) -> ChatRequest:
    return ChatRequest(
        messages=({"role": "system", "content": "judge"}, {"role": "user", "content": text}), **kw
    )


@pytest.mark.parametrize("api", ["openai", "ollama"])
def test_schema_constrained_reply_is_parsed_and_the_schema_is_sent(model_server: Any, api: str) -> None:
    model_server.script([{"contains": "f()", "content": {"verdict": "vulnerable", "confidence": 0.8}}])
    with ChatClient(endpoint(model_server, api, keep_alive_s=600)) as client:
        reply = client.chat(ask("is f() vulnerable?", schema=VERDICT, max_tokens=50))
    assert reply.data == {"verdict": "vulnerable", "confidence": 0.8}
    assert reply.text == '{"verdict": "vulnerable", "confidence": 0.8}'
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0
    assert not reply.cached and reply.model == "fake-model"
    body = model_server.calls()[0]["body"]
    if api == "openai":
        assert body["response_format"]["json_schema"] == {"name": "reply", "schema": VERDICT, "strict": True}
        assert body["max_tokens"] == 50 and reply.load_s is None
    else:
        assert body["format"] == VERDICT and body["keep_alive"] == 600
        assert body["options"] == {"temperature": 0.0, "num_predict": 50}
        assert reply.load_s == pytest.approx(2.4)  # a cold load on the first call


@pytest.mark.parametrize("api", ["openai", "ollama"])
@pytest.mark.parametrize(
    ("rule", "words", "raw"),
    [
        ({"malformed": True}, "not JSON", MALFORMED),
        ({"empty": True}, "empty reply", ""),
        (
            {"content": {"verdict": "maybe", "confidence": 0.5}},
            "/verdict",
            '{"verdict": "maybe", "confidence": 0.5}',
        ),
        ({"content": {"verdict": "unsure"}}, "missing required 'confidence'", '{"verdict": "unsure"}'),
        ({"content": "```json\n[1]\n```"}, "expected object", "```json\n[1]\n```"),
    ],
)
def test_a_bad_reply_is_a_parse_error_carrying_the_raw_text(
    model_server: Any, api: str, rule: dict[str, Any], words: str, raw: str
) -> None:
    model_server.script([rule])
    with (
        pytest.raises(ReplyParseError, match=words) as caught,
        ChatClient(endpoint(model_server, api)) as client,
    ):
        client.chat(ask("x", schema=VERDICT))
    assert caught.value.text == raw
    assert caught.value.reply is not None and caught.value.reply.usage.input_tokens > 0


def test_a_fenced_json_reply_is_unwrapped(model_server: Any) -> None:
    model_server.script([{"content": '```json\n{"verdict": "unsure", "confidence": 0.5}\n```'}])
    reply = ChatClient(endpoint(model_server, "openai")).chat(ask("x", schema=VERDICT))
    assert reply.data == {"verdict": "unsure", "confidence": 0.5}


@pytest.mark.parametrize("api", ["openai", "ollama"])
def test_an_empty_free_text_reply_is_a_parse_error(model_server: Any, api: str) -> None:
    model_server.script([{"empty": True}])
    with pytest.raises(ReplyParseError, match="empty reply"):
        ChatClient(endpoint(model_server, api)).chat(ask("x"))


@pytest.mark.parametrize("api", ["openai", "ollama"])
def test_a_slow_server_is_a_transient_timeout(model_server: Any, api: str) -> None:
    model_server.script([{"delay_s": 1.0}])
    with pytest.raises(TransientLlmError, match="no reply within") as caught:
        ChatClient(endpoint(model_server, api, timeout_s=0.2)).chat(ask("x"))
    assert isinstance(caught.value, TransientError)


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (401, AccountError),
        (402, AccountError),
        (403, AccountError),
        (429, TransientLlmError),
        (500, TransientLlmError),
        (503, TransientLlmError),
        (400, ModelRequestError),
        (404, ModelRequestError),
    ],
)
def test_http_statuses_map_to_the_error_tree(model_server: Any, status: int, error: type[Exception]) -> None:
    model_server.script(
        [{"status": status, "body": '{"error": {"message": "Authentication Fails (key sk-x)"}}'}]
    )
    with pytest.raises(error, match=f"HTTP {status}: Authentication Fails") as caught:
        ChatClient(endpoint(model_server, "openai", api_key="sk-secret")).chat(ask("x"))
    assert caught.value.status == status  # type: ignore[attr-defined]
    assert "sk-secret" not in str(caught.value)
    assert model_server.calls()[0]["path"] == "/v1/chat/completions"


def test_a_refused_connection_is_transient() -> None:
    with pytest.raises(TransientLlmError, match="ConnectError"):
        ChatClient(Endpoint(api="ollama", base_url="http://127.0.0.1:9", model="m", timeout_s=2)).chat(
            ask("x")
        )


def test_a_non_json_http_body_is_a_parse_error(model_server: Any) -> None:
    model_server.script([{"body": "<html>bad gateway</html>"}])
    with pytest.raises(ReplyParseError, match="not JSON") as caught:
        ChatClient(endpoint(model_server, "openai")).chat(ask("x"))
    assert caught.value.text == "<html>bad gateway</html>"


def test_the_api_key_is_sent_as_a_bearer_and_never_shown() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["authorization"])
        return httpx.Response(200, json={"choices": [{"message": {"content": "ok"}}], "usage": {}})

    point = Endpoint(api="openai", base_url="https://example.invalid/v1", model="m", api_key="sk-secret")
    ChatClient(point, transport=httpx.MockTransport(handler)).chat(ask("x"))
    assert seen == ["Bearer sk-secret"] and "sk-secret" not in repr(point)


@pytest.mark.parametrize(
    ("wire", "usage"),
    [
        ({"prompt_tokens": 1000, "completion_tokens": 20}, Usage(1000, 0, 0, 20)),
        (  # OpenAI and OpenRouter: cached tokens are inside prompt_tokens
            {"prompt_tokens": 1000, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 768}},
            Usage(232, 768, 0, 20),
        ),
        (  # DeepSeek: hit + miss = prompt
            {
                "prompt_tokens": 1000,
                "completion_tokens": 20,
                "prompt_cache_hit_tokens": 640,
                "prompt_cache_miss_tokens": 360,
            },
            Usage(360, 640, 0, 20),
        ),
        (
            {
                "prompt_tokens": 1000,
                "completion_tokens": 5,
                "prompt_tokens_details": {"cached_tokens": 100, "cache_write_tokens": 800},
            },
            Usage(100, 100, 800, 5),
        ),
        (None, Usage()),
    ],
)
def test_openai_style_usage_folds_into_usage(wire: dict[str, Any] | None, usage: Usage) -> None:
    assert usage_from_openai(wire) == usage


def test_deepseek_usage_over_the_wire(model_server: Any) -> None:
    model_server.script(
        [{"usage": {"prompt_tokens": 900, "prompt_cache_hit_tokens": 832, "prompt_cache_miss_tokens": 68}}]
    )
    reply = ChatClient(endpoint(model_server, "openai")).chat(ask("x"))
    assert (reply.usage.input_tokens, reply.usage.cache_read_tokens) == (68, 832)


def test_a_shared_prefix_is_reported_as_cache_reads(model_server: Any) -> None:
    prefix = "instruction and demonstrations " * 200
    client = ChatClient(endpoint(model_server, "openai"))
    first = client.chat(ask(prefix + "candidate one"))
    second = client.chat(ask(prefix + "candidate two"))
    assert first.usage.cache_read_tokens == 0
    assert second.usage.cache_read_tokens >= 1024 and second.usage.input_tokens < first.usage.input_tokens


ANSWER = {
    "type": "object",
    "properties": {
        "verdict": {"$ref": "#/$defs/verdict"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "cited_lines": {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1},
        "family": {"type": ["string", "null"]},
        "rationale": {"anyOf": [{"type": "string", "maxLength": 20}, {"type": "null"}]},
    },
    "required": ["verdict", "confidence", "cited_lines"],
    "additionalProperties": False,
    "$defs": {"verdict": {"enum": ["vulnerable", "not_vulnerable", "unsure"]}},
}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"verdict": "unsure", "confidence": 0.5, "cited_lines": [3], "family": null}', None),
        ('{"verdict": "unsure", "confidence": 1, "cited_lines": [3, 4], "rationale": "line 3"}', None),
        ('{"verdict": "sure", "confidence": 0.5, "cited_lines": [3]}', "/verdict: 'sure' is not one of"),
        ('{"verdict": "unsure", "confidence": 1.5, "cited_lines": [3]}', "/confidence: 1.5 is outside"),
        (
            '{"verdict": "unsure", "confidence": true, "cited_lines": [3]}',
            "/confidence: expected number, got bool",
        ),
        ('{"verdict": "unsure", "confidence": 0.5, "cited_lines": []}', "/cited_lines: 0 items"),
        ('{"verdict": "unsure", "confidence": 0.5, "cited_lines": [0]}', "/cited_lines/0: 0 is outside"),
        (
            '{"verdict": "unsure", "confidence": 0.5, "cited_lines": ["3"]}',
            "/cited_lines/0: expected integer",
        ),
        ('{"verdict": "unsure", "confidence": 0.5, "cited_lines": [3], "x": 1}', "unexpected property 'x'"),
        (
            '{"verdict": "unsure", "confidence": 0.5, "cited_lines": [3], "family": 7}',
            "/family: expected string or",
        ),
        (
            '{"verdict": "unsure", "confidence": 0.5, "cited_lines": [3], "rationale": "' + "x" * 21 + '"}',
            "anyOf",
        ),
    ],
)
def test_replies_are_checked_against_the_schema(text: str, problem: str | None) -> None:
    if problem is None:
        assert parse_json_reply(text, ANSWER) == json.loads(text)
        return
    with pytest.raises(ReplyParseError, match=re.escape(problem)):
        parse_json_reply(text, ANSWER)


def test_json_object_mode_states_the_schema_after_the_shared_prefix(model_server: Any) -> None:
    model_server.script(
        [{"content": " \n ", "times": 1}], default={"content": {"verdict": "unsure", "confidence": 0.5}}
    )
    point = Endpoint(api="openai", base_url=f"{model_server.url}/v1", model="m", json_mode="json_object")
    client = ChatClient(point)
    with pytest.raises(ReplyParseError, match="empty reply"):  # DeepSeek's blank answer when the model strays
        client.chat(ask("is f() vulnerable?", schema=VERDICT))
    reply = client.chat(ask("is f() vulnerable?", schema=VERDICT))
    assert reply.data == {"verdict": "unsure", "confidence": 0.5}
    body = model_server.calls()[1]["body"]
    assert body["response_format"] == {"type": "json_object"}
    assert body["messages"][0] == {"role": "system", "content": "judge"}
    assert body["messages"][1]["content"].startswith("is f() vulnerable?\n\nAnswer with one JSON object")
    assert json.dumps(VERDICT) in body["messages"][1]["content"]


def test_one_of_wants_exactly_one_alternative() -> None:
    schema = {"oneOf": [{"type": "integer"}, {"type": "number"}, {"type": "string"}]}
    assert parse_json_reply('"x"', schema) == "x"
    assert parse_json_reply("1.5", schema) == 1.5
    with pytest.raises(ReplyParseError, match="matches 2 of oneOf"):
        parse_json_reply("3", schema)
    with pytest.raises(ReplyParseError, match="matches none of oneOf"):
        parse_json_reply("null", schema)

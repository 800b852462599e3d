"""Embeddings over both APIs: vectors in order, one request per new text per model, a disk cache."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ouroboros_gates.llm import (
    AccountError,
    Budget,
    BudgetExhausted,
    EmbeddingClient,
    Endpoint,
    ModelManifest,
    Prices,
    ReplyParseError,
    TransientLlmError,
    load_manifest,
    normalise_text,
    text_digest,
)


def embedder(server: Any, api: str, model: str = "fake-embed", **kw: Any) -> EmbeddingClient:
    base = f"{server.url}/v1" if api == "openai" else server.url
    return EmbeddingClient(Endpoint(api=api, base_url=base, model=model), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("api", ["openai", "ollama"])
def test_vectors_come_back_in_order_and_equal_texts_are_fetched_once(model_server: Any, api: str) -> None:
    client = embedder(model_server, api, batch_size=2)
    vectors = client.embed(["alpha", "beta", "alpha  \r\n", "gamma"])
    assert len(vectors) == 4 and all(len(v) == 16 for v in vectors)
    assert vectors[0] == vectors[2] != vectors[1]
    assert math.isclose(sum(x * x for x in vectors[3]), 1.0)
    calls = model_server.calls()
    assert [c["body"]["input"] for c in calls] == [["alpha", "beta"], ["gamma"]]
    assert calls[0]["path"] == ("/v1/embeddings" if api == "openai" else "/api/embed")
    assert client.embed(["beta", "gamma"]) == [vectors[1], vectors[3]] and len(model_server.calls()) == 2
    assert client.calls == 2 and client.usage.input_tokens > 0


def test_the_disk_cache_is_per_model(model_server: Any, tmp_path: Path) -> None:
    first = embedder(model_server, "openai", cache_dir=tmp_path).embed(["def f(x):\n    return x\n"])
    again = embedder(model_server, "openai", cache_dir=tmp_path).embed(["def f(x):\n    return x"])
    assert again == first and len(model_server.calls()) == 1
    embedder(model_server, "openai", model="other/model", cache_dir=tmp_path).embed(
        ["def f(x):\n    return x"]
    )
    assert len(model_server.calls()) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake-embed", "other_model"]


def test_normalisation_keeps_meaning_and_drops_layout_noise() -> None:
    assert normalise_text("\n  a \r\nb\t\n\n") == "  a\nb"
    assert text_digest("a\r\nb  ") == text_digest("a\nb") != text_digest("a\n b")
    assert text_digest("e\u0301") == text_digest("\u00e9")


@pytest.mark.parametrize(
    ("rule", "error", "words"),
    [
        ({"body": '{"data": []}'}, ReplyParseError, "0 vectors for 1 texts"),
        ({"body": '{"data": [{"index": 0, "embedding": ["x"]}]}'}, ReplyParseError, "not a list of numbers"),
        ({"status": 503}, TransientLlmError, "HTTP 503"),
    ],
)
def test_a_bad_embedding_reply_is_typed(
    model_server: Any, rule: dict[str, Any], error: type, words: str
) -> None:
    model_server.script([rule])
    with pytest.raises(error, match=words):
        embedder(model_server, "openai").embed(["x"])


def test_nothing_to_embed_is_no_call(model_server: Any) -> None:
    assert embedder(model_server, "ollama").embed([]) == [] and model_server.calls() == []


def priced(dimensions: int = 16) -> ModelManifest:
    return replace(
        load_manifest("openrouter/openai/text-embedding-3-small"),
        prices=Prices(input=0.02, cache_read=0.02, cache_write=0.02, output=0.0),
        dimensions=dimensions,
    )


def test_paid_embeddings_are_priced_and_share_the_run_budget(model_server: Any) -> None:
    budget = Budget(usd_ceiling=None, call_ceiling=2)
    client = embedder(model_server, "openai", manifest=priced(), budget=budget, batch_size=1)
    client.embed(["one"])
    assert client.spent_usd == pytest.approx(client.usage.input_tokens * 0.02 / 1e6) and client.spent_usd > 0
    assert budget.calls == 1 and budget.spent_usd == client.spent_usd
    with pytest.raises(BudgetExhausted, match="calls ceiling"):
        client.embed(["two", "three"])
    assert len(model_server.calls()) == 2 and budget.calls == 2


def test_paid_embeddings_without_usage_are_a_working_looking_zero(model_server: Any) -> None:
    model_server.script([{"usage": "none"}])
    with pytest.raises(AccountError, match="a working-looking zero"):
        embedder(model_server, "openai", manifest=priced()).embed(["x"])
    local = replace(load_manifest("nomic-embed-text"), dimensions=16)
    assert len(embedder(model_server, "ollama", manifest=local).embed(["x"])[0]) == 16  # $0: no usage is fine

"""Model manifests, endpoints from settings, the bounded pool and the package's public surface."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ouroboros_gates import llm
from ouroboros_gates.llm import (
    MANIFEST_DIR,
    ChatClient,
    ChatRequest,
    ModelRequestError,
    ReplyParseError,
    Usage,
    embedder_from_settings,
    endpoint_from_settings,
    list_manifests,
    load_manifest,
    metered_from_settings,
    run_bounded,
)
from ouroboros_gates.schemas.errors import ConfigurationError
from ouroboros_gates.schemas.settings import load_settings


@pytest.fixture(autouse=True)
def _no_model_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own model settings must not leak into these tests."""
    for key in list(os.environ):
        if key.startswith("OURO_") and ("MODEL" in key or "EMBED" in key):
            monkeypatch.delenv(key)


def test_every_shipped_manifest_loads_with_prices_and_a_window() -> None:
    manifests = list_manifests()
    ids = {m.id for m in manifests}
    assert {"deepseek-chat", "qwen3:8b", "local", "openrouter/openai/gpt-4o-mini", "nomic-embed-text"} <= ids
    assert len(ids) == len(manifests)
    for manifest in manifests:
        assert manifest.context_window > 0 and manifest.notes and manifest.api in ("openai", "ollama")
    assert load_manifest("qwen3:8b").cost(Usage(10**6, 10**6, 10**6, 10**6)) == 0.0
    assert load_manifest("qwen3-8b").model == "qwen3:8b"  # the file name works too
    deepseek = load_manifest("deepseek-chat")
    assert deepseek.cost(Usage(input_tokens=10**6)) == pytest.approx(deepseek.prices.input)
    assert 0 < deepseek.prices.cache_read < deepseek.prices.input
    assert load_manifest("nomic-embed-text").dimensions == 768
    assert load_manifest("deepseek-v4-flash").json_mode == "json_object"  # DeepSeek has no json_schema mode
    assert load_manifest("local").json_mode == "json_schema"


def test_an_unknown_model_names_itself_and_the_folder() -> None:
    with pytest.raises(ModelRequestError, match=rf"no model manifest for 'gpt-9' in {MANIFEST_DIR}"):
        load_manifest("gpt-9")


def test_a_broken_manifest_names_its_file(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(
        'id = "x"\napi = "grpc"\ncontext_window = 1\n[prices]\ninput = 1\noutput = 1\n'
    )
    with pytest.raises(ModelRequestError, match=r"bad.toml: invalid model manifest.*'grpc'"):
        load_manifest("x", tmp_path)
    (tmp_path / "bad.toml").write_text('id = "x"\napi = "openai"\ncontext_window = 1\n[prices]\ninptu = 1\n')
    with pytest.raises(ModelRequestError, match="unknown price keys"):
        load_manifest("x", tmp_path)


def test_a_cache_price_left_out_is_charged_as_input(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text(
        'id = "m"\napi = "openai"\ncontext_window = 8\n[prices]\ninput = 2\noutput = 3\n'
    )
    assert load_manifest("m", tmp_path).cost(Usage(0, 10**6, 10**6, 10**6)) == 7.0
    (tmp_path / "m.toml").write_text('id = "m"\napi = "openai"\ncontext_window = 8\n[prices]\ninput = 2\n')
    with pytest.raises(ModelRequestError, match="KeyError: 'output'"):
        load_manifest("m", tmp_path)


def test_no_model_configured_is_no_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OURO_MODEL", "")
    assert endpoint_from_settings(load_settings()) is None
    assert endpoint_from_settings(load_settings(), embed=True) is None


def test_the_manifest_fills_what_the_settings_leave_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OURO_MODEL", "deepseek-chat")
    monkeypatch.setenv("OURO_MODEL_API_KEY", "sk-secret")
    monkeypatch.setenv("OURO_LABELER_MODEL", "qwen3:8b")
    monkeypatch.setenv("OURO_MODEL_KEEP_ALIVE_S", "300")
    monkeypatch.setenv("OURO_EMBED_MODEL", "nomic-embed-text")
    monkeypatch.setenv("OURO_EMBED_URL", "http://gpu-host:11434")
    settings = load_settings()
    point = endpoint_from_settings(settings)
    assert point is not None and (point.api, point.base_url, point.model) == (
        "openai",
        "https://api.deepseek.com/v1",
        "deepseek-chat",
    )
    assert point.api_key == "sk-secret" and "sk-secret" not in repr(settings)
    labeler = endpoint_from_settings(load_settings("labeler"))
    assert labeler is not None and (labeler.api, labeler.model, labeler.keep_alive_s) == (
        "ollama",
        "qwen3:8b",
        300,
    )
    embed = endpoint_from_settings(settings, embed=True)
    assert embed is not None and (embed.api, embed.base_url, embed.api_key) == (
        "ollama",
        "http://gpu-host:11434",
        None,
    )


def test_a_model_without_manifest_is_called_by_its_id(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OURO_MODEL", "my-finetune")
    monkeypatch.setenv("OURO_MODEL_API", "ollama")
    point = endpoint_from_settings(load_settings())
    assert point is not None and (point.api, point.base_url, point.model) == (
        "ollama",
        "http://127.0.0.1:11434",
        "my-finetune",
    )


def test_an_invalid_api_setting_names_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OURO_MODEL_API", "grpc")
    with pytest.raises(ConfigurationError, match="OURO_MODEL_API"):
        load_settings()


def test_run_bounded_keeps_order_and_at_most_n_in_flight() -> None:
    lock, now, peak = threading.Lock(), [0], [0]

    def call(i: int) -> int:
        with lock:
            now[0] += 1
            peak[0] = max(peak[0], now[0])
        time.sleep(0.01)
        with lock:
            now[0] -= 1
        if i == 5:
            raise ValueError("five")
        return i * i

    calls = [lambda i=i: call(i) for i in range(30)]
    outcomes = run_bounded(calls, 4, return_exceptions=True)
    assert [o for o in outcomes if not isinstance(o, Exception)] == [i * i for i in range(30) if i != 5]
    assert isinstance(outcomes[5], ValueError) and 1 < peak[0] <= 4
    with pytest.raises(ValueError, match="five"):
        run_bounded(calls)
    with pytest.raises(ValueError, match="at least 1"):
        run_bounded(calls, 0)
    assert run_bounded([]) == []


def test_the_public_surface_is_sorted_and_real() -> None:
    assert llm.__all__ == sorted(llm.__all__, key=lambda name: (not name.isupper(), name))
    assert all(hasattr(llm, name) for name in llm.__all__)
    assert issubclass(llm.TransientLlmError, llm.LlmError) and issubclass(llm.BudgetExhausted, llm.LlmError)


def test_clients_from_settings_meter_and_cache_under_the_state_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, model_server: Any
) -> None:
    monkeypatch.setenv("OURO_STATE", str(tmp_path))
    assert metered_from_settings(load_settings()) is None and embedder_from_settings(load_settings()) is None
    monkeypatch.setenv("OURO_MODEL", "deepseek-chat")
    monkeypatch.setenv("OURO_MODEL_URL", f"{model_server.url}/v1")
    monkeypatch.setenv("OURO_MODEL_USD_CEILING", "0.5")
    monkeypatch.setenv("OURO_MODEL_CALL_CEILING", "3")
    monkeypatch.setenv("OURO_EMBED_MODEL", "nomic-embed-text")
    monkeypatch.setenv("OURO_EMBED_URL", model_server.url)
    metered = metered_from_settings(load_settings())
    assert metered is not None and (metered.usd_ceiling, metered.call_ceiling) == (0.5, 3)
    request = ChatRequest(messages=({"role": "user", "content": "hi"},))
    assert metered.chat(request).text == metered.chat(request).text == "ok" and metered.cache_hits == 1
    embedder = embedder_from_settings(load_settings())
    assert embedder is not None and embedder.dimensions == 768
    with pytest.raises(ReplyParseError, match="16 dimensions, 768 declared"):
        embedder.embed(["x"])  # the fake serves 16
    assert (
        tmp_path / "responses"
    ).is_dir() and embedder.cache_dir == tmp_path / "embeddings" / "nomic-embed-text"
    monkeypatch.setenv("OURO_MODEL", "unpriced")
    with pytest.raises(ModelRequestError, match="no model manifest for 'unpriced'"):
        metered_from_settings(load_settings())


@pytest.mark.parametrize(
    ("model", "api", "switch"), [("deepseek-v4-flash", "openai", "thinking"), ("qwen3:8b", "ollama", "think")]
)
def test_a_manifests_request_fields_reach_the_wire(
    monkeypatch: pytest.MonkeyPatch, model_server: Any, model: str, api: str, switch: str
) -> None:
    monkeypatch.setenv("OURO_MODEL", model)
    monkeypatch.setenv("OURO_MODEL_URL", f"{model_server.url}/v1" if api == "openai" else model_server.url)
    point = endpoint_from_settings(load_settings())
    assert point is not None and point.extra_body == load_manifest(model).body
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    model_server.script([{"content": {"n": 1}}])
    ChatClient(point).chat(ChatRequest(messages=({"role": "user", "content": "n?"},), schema=schema))
    body = model_server.calls()[0]["body"]
    assert body[switch] == load_manifest(model).body[switch] and body["model"] == point.model

"""The scripted model server itself: rule matching, recording, Ollama's lists, and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_model_server import FakeModelServer, example_for

from ouroboros_gates.llm import ChatClient, ChatRequest, Endpoint

SERVER = Path(__file__).resolve().parents[1] / "fake_model_server.py"


def say(server: Any, text: str, api: str = "ollama") -> str:
    base = f"{server.url}/v1" if api == "openai" else server.url
    point = Endpoint(api=api, base_url=base, model="fake-model")  # type: ignore[arg-type]
    return ChatClient(point).chat(ChatRequest(messages=({"role": "user", "content": text},))).text


def test_rules_match_in_order_by_path_substring_call_index_and_times(model_server: Any) -> None:
    model_server.script(
        [
            {"call": 0, "content": "first"},
            {"path": "/v1/chat/completions", "content": "openai"},
            {"contains": "retry", "times": 1, "content": "once"},
        ],
        default={"content": "default"},
    )
    replies = [say(model_server, "a"), say(model_server, "a", "openai"), say(model_server, "retry")]
    replies += [say(model_server, "retry"), say(model_server, "a")]
    assert replies == ["first", "openai", "once", "default", "default"]


def test_every_request_is_recorded_and_served_back(model_server: Any) -> None:
    assert model_server.calls() == []
    say(model_server, "hello")
    recorded = httpx.get(f"{model_server.url}/_requests").json()
    assert [(r["method"], r["path"]) for r in recorded] == [("POST", "/api/chat"), ("GET", "/_requests")]
    assert recorded[0]["body"]["messages"] == [{"role": "user", "content": "hello"}]
    assert model_server.calls("/api/chat") == model_server.requests[:1]


def test_ollama_lists_its_models_and_those_loaded(model_server: Any) -> None:
    tags = httpx.get(f"{model_server.url}/api/tags").json()
    assert [m["name"] for m in tags["models"]] == ["fake-model"]
    assert httpx.get(f"{model_server.url}/api/ps").json() == {"models": []}
    say(model_server, "load it")
    loaded = httpx.get(f"{model_server.url}/api/ps").json()["models"]
    assert [m["name"] for m in loaded] == ["fake-model"] and loaded[0]["size_vram"] > 0


def test_a_schema_without_scripted_content_gets_its_smallest_value() -> None:
    schema = {
        "type": "object",
        "properties": {
            "verdict": {"enum": ["vulnerable", "unsure"]},
            "lines": {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1},
            "why": {"$ref": "#/$defs/why"},
        },
        "required": ["verdict", "lines", "why"],
        "$defs": {"why": {"type": "string", "minLength": 2}},
    }
    assert example_for(schema) == {"verdict": "vulnerable", "lines": [1], "why": "xx"}


def test_an_unknown_rule_key_is_refused(model_server: Any) -> None:
    with pytest.raises(ValueError, match=r"unknown rule keys \['contents'\]"):
        model_server.script([{"contents": "x"}])


def test_the_command_line_serves_a_script_file(tmp_path: Path) -> None:
    with FakeModelServer() as probe:  # a free port, released before the child binds it
        port = int(probe.url.rsplit(":", 1)[1])
    script = tmp_path / "rules.json"
    script.write_text(
        json.dumps({"rules": [{"contains": "ping", "content": "pong"}], "default": {"status": 500}})
    )
    child = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", str(port), "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip().endswith(f":{port}")
        server = type("Server", (), {"url": f"http://127.0.0.1:{port}"})()
        assert say(server, "ping") == "pong"
        response = httpx.post(f"{server.url}/api/chat", json={"messages": [{"role": "user", "content": "x"}]})
        assert response.status_code == 500
    finally:
        child.terminate()
        child.wait(10)

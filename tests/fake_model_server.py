"""A scripted model server on 127.0.0.1 for tests: real HTTP, both APIs, no model.

Serves ``POST /v1/chat/completions`` and ``/api/chat`` (chat), ``/v1/embeddings`` and ``/api/embed``
(embeddings), ``GET /api/tags`` and ``/api/ps`` (Ollama's model lists) and ``GET /_requests`` (every request
so far). Replies follow a script: rules tried in order, the first that matches answers; the default rule
answers the rest. A rule is a dict (or ``Rule``) with:

- matching: ``path`` (exact request path), ``contains`` (substring of the last user message), ``call``
  (0-based index among the POSTs the server received), ``times`` (matches at most this often);
- answering: ``content`` (a JSON value is sent as JSON text, a string as is), ``malformed`` (JSON cut off
  mid-object), ``empty`` (an empty reply), ``status`` (an HTTP error, with ``body``), ``body`` (a raw HTTP
  body, e.g. an HTML proxy page), ``delay_s`` (sleep before answering), ``usage`` (``"none"`` omits usage,
  ``"zero"`` reports zeros, a dict replaces wire fields: ``prompt_tokens``, ``cached_tokens``,
  ``prompt_cache_hit_tokens``, ``prompt_eval_count``, ``load_duration`` …).

Without ``content`` a chat reply is the smallest value the request's schema allows (or ``ok``). Usage is
realistic: about four characters a token; OpenAI-style ``cached_tokens`` count the prompt prefix shared with
an earlier request in 64-token blocks; Ollama reports ``load_duration`` on a model's first call only.
Embeddings are unit vectors derived from the sha256 of the text (``dim`` numbers).

Run alone: ``python tests/fake_model_server.py --port 8000 --script rules.json`` (a JSON list of rules, or
``{"rules": [...], "default": {...}}``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["FakeModelServer", "Rule", "example_for"]

CHAT_PATHS = ("/v1/chat/completions", "/api/chat")
EMBED_PATHS = ("/v1/embeddings", "/api/embed")
MALFORMED = '{"verdict": "vulnerable", "confidence": 0.9, "rationale": "line 3 reads'
LOAD_NS = 2_400_000_000  # a cold load of an 8B model from a local disk
_PREFIX_MEMORY = 64  # earlier prompts a new one is compared with for its cached prefix


@dataclass
class Rule:
    """One scripted answer and the requests it matches."""

    path: str | None = None
    contains: str | None = None
    call: int | None = None
    times: int | None = None
    content: Any = None
    malformed: bool = False
    empty: bool = False
    status: int | None = None
    body: str | None = None
    delay_s: float = 0.0
    usage: Any = None
    used: int = field(default=0, repr=False)

    @classmethod
    def of(cls, value: Rule | Mapping[str, Any]) -> Rule:
        """A rule from itself or from a dict of its fields (unknown keys are an error)."""
        if isinstance(value, Rule):
            return value
        names = {f.name for f in fields(cls)} - {"used"}
        unknown = set(value) - names
        if unknown:
            raise ValueError(f"unknown rule keys {sorted(unknown)}; known: {sorted(names)}")
        return cls(**value)

    def matches(self, path: str, last_user: str, index: int) -> bool:
        """Whether this rule answers a request."""
        return (
            (self.path is None or self.path == path)
            and (self.contains is None or self.contains in last_user)
            and (self.call is None or self.call == index)
            and (self.times is None or self.used < self.times)
        )


class FakeModelServer:
    """The scripted server; ``url`` is its root (OpenAI clients use ``url + "/v1"``)."""

    def __init__(self, port: int = 0, *, dim: int = 16, models: Iterable[str] = ("fake-model",)) -> None:
        self.dim = dim
        self.models = list(models)
        self.requests: list[dict[str, Any]] = []
        self.rules: list[Rule] = []
        self.default = Rule()
        self.in_flight = 0
        self.peak_in_flight = 0  # the most POSTs being answered at once
        self._prompts: list[str] = []
        self._loaded: set[str] = set()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def script(
        self, rules: Iterable[Rule | Mapping[str, Any]], default: Rule | Mapping[str, Any] | None = None
    ) -> None:
        """Replace the rules (and the default rule, when given)."""
        with self._lock:
            self.rules = [Rule.of(r) for r in rules]
            if default is not None:
                self.default = Rule.of(default)

    def calls(self, path: str | None = None) -> list[dict[str, Any]]:
        """The recorded POSTs (to ``path`` when given)."""
        with self._lock:
            return [r for r in self.requests if r["method"] == "POST" and path in (None, r["path"])]

    def start(self) -> FakeModelServer:
        """Serve in a daemon thread."""
        serve = lambda: self._httpd.serve_forever(poll_interval=0.02)  # noqa: E731  (a quick shutdown)
        self._thread = threading.Thread(target=serve, name="fake-model", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # answering ------------------------------------------------------------------------------------------

    def answer(self, method: str, path: str, body: Any) -> tuple[int, str, float]:
        """Status, body and delay for one request (and record it)."""
        with self._lock:
            index = sum(1 for r in self.requests if r["method"] == "POST")
            self.requests.append({"method": method, "path": path, "body": body})
            if method == "GET":
                return 200, self._get(path), 0.0
            rule = self._rule(path, body, index)
        if rule.status is not None:
            error = (
                rule.body
                if rule.body is not None
                else json.dumps({"error": {"message": f"scripted {rule.status}"}})
            )
            return rule.status, error, rule.delay_s
        if rule.body is not None:
            return 200, rule.body, rule.delay_s
        if path in CHAT_PATHS:
            return 200, json.dumps(self._chat(path, body, rule)), rule.delay_s
        if path in EMBED_PATHS:
            return 200, json.dumps(self._embed(path, body, rule)), rule.delay_s
        return 404, json.dumps({"error": {"message": f"no route {path}"}}), 0.0

    def _rule(self, path: str, body: Any, index: int) -> Rule:
        last_user = _last_user(body)
        for rule in self.rules:
            if rule.matches(path, last_user, index):
                rule.used += 1
                return rule
        return self.default

    def _get(self, path: str) -> str:
        if path == "/_requests":
            return json.dumps(self.requests)
        entries = [
            {"name": m, "model": m, "size": 5_200_000_000, "details": {"family": "fake"}} for m in self.models
        ]
        if path == "/api/ps":
            entries = [dict(e, size_vram=e["size"], expires_at="2099-01-01T00:00:00Z") for e in entries]
            entries = [e for e in entries if e["name"] in self._loaded]
        return json.dumps({"models": entries})

    def _chat(self, path: str, body: dict[str, Any], rule: Rule) -> dict[str, Any]:
        text = _content(rule, body)
        prompt = "".join(str(m.get("content", "")) for m in body.get("messages", []))
        model = str(body.get("model", self.models[0]))
        with self._lock:
            shared = max((_common_prefix(prompt, p) for p in self._prompts[-_PREFIX_MEMORY:]), default=0)
            self._prompts.append(prompt)
            cold = model not in self._loaded
            self._loaded.add(model)
        prompt_tokens, output_tokens = _tokens(prompt), _tokens(text)
        if path == "/api/chat":
            usage = {
                "prompt_eval_count": prompt_tokens,
                "eval_count": output_tokens,
                "load_duration": LOAD_NS if cold else 1_800_000,
                "total_duration": 300_000_000,
            }
            reply = {
                "model": model,
                "created_at": "2026-01-01T00:00:00Z",
                "done": True,
                "done_reason": "stop",
            }
            reply["message"] = {"role": "assistant", "content": text}
            return _with_usage(reply, usage, rule.usage, nested=False)
        cached = min(shared // 4 // 64 * 64, prompt_tokens)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": prompt_tokens + output_tokens,
            "cached_tokens": cached,
        }
        reply = {"id": f"chatcmpl-{len(self._prompts)}", "object": "chat.completion", "model": model}
        choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
        reply["choices"] = [choice]
        return _with_usage(reply, usage, rule.usage, nested=True)

    def _embed(self, path: str, body: dict[str, Any], rule: Rule) -> dict[str, Any]:
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else list(texts)
        vectors = [vector_for(str(t), self.dim) for t in texts]
        tokens = sum(_tokens(str(t)) for t in texts)
        model = str(body.get("model", self.models[0]))
        if path == "/api/embed":
            reply = {"model": model, "embeddings": vectors}
            return _with_usage(
                reply, {"prompt_eval_count": tokens, "load_duration": 1_800_000}, rule.usage, False
            )
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        reply = {"object": "list", "model": model, "data": data}
        return _with_usage(reply, {"prompt_tokens": tokens, "total_tokens": tokens}, rule.usage, nested=True)


def vector_for(text: str, dim: int) -> list[float]:
    """A unit vector that depends only on the text."""
    raw = b"".join(hashlib.sha256(f"{i}:{text}".encode()).digest() for i in range(dim // 8 + 1))
    values = [int.from_bytes(raw[4 * i : 4 * i + 4], "big") / 2**31 - 1.0 for i in range(dim)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def example_for(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> Any:
    """The smallest value a JSON Schema allows: first enum value, minimum, required properties."""
    root = root or schema
    if "$ref" in schema:
        node: Any = root
        for part in filter(None, schema["$ref"][1:].split("/")):
            node = node[part]
        return example_for(node, root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return example_for(schema[key][0], root)
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties", {})
        return {name: example_for(props.get(name, {}), root) for name in schema.get("required", list(props))}
    if kind == "array":
        return [example_for(schema.get("items", {}), root) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * schema.get("minLength", 0)
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    return {"boolean": False, "null": None}.get(kind)


def _content(rule: Rule, body: Mapping[str, Any]) -> str:
    if rule.empty:
        return ""
    if rule.malformed:
        return MALFORMED
    if rule.content is not None:
        return rule.content if isinstance(rule.content, str) else json.dumps(rule.content)
    schema = body.get("format")
    response_format = body.get("response_format") or {}
    if schema is None:
        schema = (response_format.get("json_schema") or {}).get("schema")
    if isinstance(schema, dict):
        return json.dumps(example_for(schema))
    return "{}" if schema == "json" or response_format.get("type") == "json_object" else "ok"


def _with_usage(reply: dict[str, Any], usage: dict[str, Any], scripted: Any, nested: bool) -> dict[str, Any]:
    if scripted == "none":
        return reply
    if scripted == "zero":
        usage = {key: 0 for key in usage}
    elif isinstance(scripted, Mapping):
        usage = {**usage, **scripted}
    if not nested:
        return {**reply, **usage}
    wire = {k: v for k, v in usage.items() if k not in ("cached_tokens", "cache_write_tokens")}
    details = {k: usage[k] for k in ("cached_tokens", "cache_write_tokens") if k in usage}
    if details:
        wire["prompt_tokens_details"] = details
    return {**reply, "usage": wire}


def _last_user(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    users = [m for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "user"]
    if users:
        return str(users[-1].get("content", ""))
    texts = body.get("input", "")
    return texts if isinstance(texts, str) else "\n".join(map(str, texts))


def _tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _handler(server: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

        def do_GET(self) -> None:
            self._reply(*server.answer("GET", self.path, None))

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode(errors="replace")
            with server._lock:
                server.in_flight += 1
                server.peak_in_flight = max(server.peak_in_flight, server.in_flight)
            try:
                self._reply(*server.answer("POST", self.path, body))
            finally:
                with server._lock:
                    server.in_flight -= 1

        def _reply(self, status: int, text: str, delay_s: float) -> None:
            if delay_s:
                time.sleep(delay_s)
            data = text.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the recorded requests are the log."""

    return Handler


def main(argv: list[str] | None = None) -> None:
    """Serve a script until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", type=Path, help="JSON: a list of rules, or {rules, default}")
    parser.add_argument("--dim", type=int, default=16, help="embedding dimension")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds the default rule waits")
    args = parser.parse_args(argv)
    server = FakeModelServer(args.port, dim=args.dim)
    loaded = json.loads(args.script.read_text()) if args.script else []
    rules, default = (
        (loaded.get("rules", []), loaded.get("default")) if isinstance(loaded, dict) else (loaded, None)
    )
    server.script(rules, default or {"delay_s": args.latency})
    print(f"fake model server on {server.url}", flush=True)
    server.start()
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()

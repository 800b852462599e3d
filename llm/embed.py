"""Embeddings over HTTP: OpenAI-compatible ``/embeddings`` (``data[].embedding``) or Ollama's ``/api/embed``
(``embeddings``), cached per model by the sha256 of the normalised text, in memory and optionally on disk."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from ouroboros_gates.llm._types import Endpoint, Usage
from ouroboros_gates.llm._wire import http_client, post_json
from ouroboros_gates.llm.budget import Budget
from ouroboros_gates.llm.errors import AccountError, ReplyParseError
from ouroboros_gates.llm.manifest import ModelManifest

__all__ = ["EmbeddingClient", "normalise_text", "text_digest"]

_BATCH = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def normalise_text(text: str) -> str:
    """NFC, ``\\n`` line ends, trailing blanks of each line and the text's outer blank lines removed."""
    lines = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def text_digest(text: str) -> str:
    """The sha256 (hex) of the normalised text: the cache key of its embedding."""
    return hashlib.sha256(normalise_text(text).encode()).hexdigest()


class EmbeddingClient:
    """Embed texts with one endpoint; a vector is fetched once per model and normalised text.

    With a ``manifest`` each request is priced and reserved against ``budget`` (shared with a
    ``MeteredClient`` for one ceiling per run) and a paid reply without usage is a working-looking zero;
    ``dimensions`` (or the manifest's) is checked on every vector.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        transport: httpx.BaseTransport | None = None,
        *,
        cache_dir: Path | str | None = None,
        batch_size: int = _BATCH,
        manifest: ModelManifest | None = None,
        budget: Budget | None = None,
        dimensions: int | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.batch_size = batch_size
        self.cache_dir = _model_folder(cache_dir, endpoint.model)
        self.manifest = manifest
        self.budget = budget or Budget()
        self.dimensions = dimensions or (manifest.dimensions if manifest else None)
        self.calls = 0
        self.spent_usd = 0.0
        self.usage = Usage()
        self._memory: dict[str, list[float]] = {}
        self._lock = threading.Lock()
        self._http = http_client(endpoint, transport)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order; only the texts never embedded before reach the server."""
        digests = [text_digest(t) for t in texts]
        self._fetch_missing(list(self._missing(digests, texts).items()))
        return [self._memory[d] for d in digests]

    def _missing(self, digests: list[str], texts: Sequence[str]) -> dict[str, str]:
        """Digest -> normalised text of each text embedded neither in memory nor on disk, once each."""
        missing: dict[str, str] = {}
        for digest, text in zip(digests, texts, strict=True):
            if digest not in missing and self._lookup(digest) is None:
                missing[digest] = normalise_text(text)
        return missing

    def _fetch_missing(self, pending: list[tuple[str, str]]) -> None:
        """Fetch and store the vectors of ``(digest, text)`` pairs, ``batch_size`` texts a request."""
        for start in range(0, len(pending), self.batch_size):
            batch = pending[start : start + self.batch_size]
            vectors = self._fetch([text for _, text in batch])
            for (digest, _), vector in zip(batch, vectors, strict=True):
                self._store(digest, vector)

    def close(self) -> None:
        """Close the pooled connections."""
        self._http.close()

    def __enter__(self) -> EmbeddingClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fetch(self, texts: list[str]) -> list[list[float]]:
        with self.budget.reserve(self._worst_cost(texts)) as reservation:
            vectors, usage, payload = self._post(texts)
            if self.manifest is not None:
                reservation.cost_usd = self.manifest.cost(usage)
                _check_reported(self.manifest, usage, len(texts))
        checked = _vectors(vectors, len(texts), payload, self.dimensions)
        with self._lock:
            self.calls += 1
            self.spent_usd += reservation.cost_usd
            self.usage = self.usage + usage
        return checked

    def _worst_cost(self, texts: list[str]) -> float:
        """The most a request for ``texts`` can cost: a token per byte and eight per text (0 unpriced)."""
        if not self.manifest:
            return 0.0
        return sum(len(t.encode()) + 8 for t in texts) * self.manifest.prices.input / 1e6

    def _post(self, texts: list[str]) -> tuple[object, Usage, dict[str, Any]]:
        body: dict[str, Any] = {"model": self.endpoint.model, "input": texts}
        if self.endpoint.api == "ollama":
            return self._post_ollama(body)
        return self._post_openai(body)

    def _post_ollama(self, body: dict[str, Any]) -> tuple[object, Usage, dict[str, Any]]:
        """Ollama's ``/api/embed``: ``embeddings``, and the prompt's tokens as ``prompt_eval_count``."""
        if self.endpoint.keep_alive_s is not None:
            body["keep_alive"] = self.endpoint.keep_alive_s
        payload, _ = post_json(self._http, "/api/embed", body)
        return (
            payload.get("embeddings"),
            Usage(input_tokens=_count(payload.get("prompt_eval_count"))),
            payload,
        )

    def _post_openai(self, body: dict[str, Any]) -> tuple[object, Usage, dict[str, Any]]:
        """OpenAI's ``/embeddings``: ``data[].embedding`` in ``index`` order, and ``usage.prompt_tokens``."""
        payload, _ = post_json(self._http, "/embeddings", body)
        rows = sorted(payload.get("data") or [], key=lambda row: int(row.get("index", 0)))
        usage = Usage(input_tokens=_count((payload.get("usage") or {}).get("prompt_tokens")))
        return [row.get("embedding") for row in rows], usage, payload

    def _lookup(self, digest: str) -> list[float] | None:
        if digest in self._memory:
            return self._memory[digest]
        if self.cache_dir is None:
            return None
        try:
            vector = json.loads((self.cache_dir / digest[:2] / f"{digest}.json").read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return None
        self._memory[digest] = vector
        return list(vector)

    def _store(self, digest: str, vector: list[float]) -> None:
        self._memory[digest] = vector
        if self.cache_dir is None:
            return
        folder = self.cache_dir / digest[:2]
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(vector, handle)
        os.replace(tmp, folder / f"{digest}.json")


def _model_folder(cache_dir: Path | str | None, model: str) -> Path | None:
    """The model's own folder of the disk cache, its name made safe for a path; None without a cache."""
    return Path(cache_dir) / _UNSAFE.sub("_", model) if cache_dir is not None else None


def _check_reported(manifest: ModelManifest, usage: Usage, count: int) -> None:
    """A paid model that returned ``count`` vectors but reported no tokens is an ``AccountError``."""
    if usage.total == 0 and manifest.prices.input > 0:
        raise AccountError(
            f"a working-looking zero: {manifest.id} returned {count} vectors "
            "but reported no tokens; check the account, the key and the endpoint"
        )


def _vectors(
    vectors: object, expected: int, payload: dict[str, Any], dimensions: int | None
) -> list[list[float]]:
    """The reply's vectors, checked: one per text, numbers, all of one dimension (the declared one)."""
    text = json.dumps(payload)[:500]
    if not isinstance(vectors, list) or len(vectors) != expected:
        raise ReplyParseError(
            f"embedding reply has {_how_many(vectors)} vectors for {expected} texts", text=text
        )
    if not all(map(_is_vector, vectors)):
        raise ReplyParseError("embedding reply holds a vector that is not a list of numbers", text=text)
    _check_dimensions(vectors, dimensions, text)
    return [[float(x) for x in v] for v in vectors]


def _how_many(vectors: object) -> int | str:
    """How many vectors a reply holds; the type's name when it holds no list."""
    return len(vectors) if isinstance(vectors, list) else type(vectors).__name__


def _is_vector(value: object) -> bool:
    """A non-empty list of numbers."""
    return isinstance(value, list) and bool(value) and all(isinstance(x, int | float) for x in value)


def _check_dimensions(vectors: list[list[float]], dimensions: int | None, text: str) -> None:
    """All vectors of one dimension, the declared one when there is one."""
    if len({len(v) for v in vectors}) > 1:
        raise ReplyParseError("embedding reply mixes dimensions", text=text)
    if dimensions is not None and len(vectors[0]) != dimensions:
        raise ReplyParseError(f"embedding has {len(vectors[0])} dimensions, {dimensions} declared", text=text)


def _count(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0

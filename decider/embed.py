"""Code embeddings for retrieval's stage 2: a model endpoint, or a local hashed-n-gram embedder that needs
no network; either one behind a cache keyed per model by sha256 of the normalised excerpt."""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from ouroboros_gates.decider.excerpt import normalise, normalised_sha

__all__ = ["CachedEmbedder", "Embedder", "EmbeddingCache", "HashingEmbedder", "ModelEmbedder"]

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|[^\sA-Za-z0-9_]")


class Embedder(Protocol):
    """Texts in, one vector each out; ``model`` names the vector space (the cache's key)."""

    @property
    def model(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class EmbeddingCache(Protocol):
    """Where vectors are kept per (model, normalised sha)."""

    def get_embeddings(self, model: str, shas: Sequence[str]) -> dict[str, list[float]]: ...

    def put_embeddings(self, model: str, vectors: Mapping[str, list[float]]) -> None: ...


class HashingEmbedder:
    """Hashed token 1-3-grams of the normalised excerpt, log-scaled and L2-normalised (no network, $0)."""

    def __init__(self, dims: int = 256) -> None:
        self.dims = dims

    @property
    def model(self) -> str:
        """The vector space's id."""
        return f"local/hashed-ngrams-v1-{self.dims}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text."""
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> list[float]:
        tokens = [t.lower() for t in _TOKEN.findall(normalise(text))]
        vector = [0.0] * self.dims
        for gram, count in _grams(tokens).items():
            h = int.from_bytes(hashlib.blake2b(gram.encode(), digest_size=8).digest(), "big")
            vector[h % self.dims] += (1.0 if h >> 63 else -1.0) * (1.0 + math.log(count))
        return _unit(vector)


def _grams(tokens: Sequence[str]) -> Counter[str]:
    """The tokens' 1-, 2- and 3-grams with their counts."""
    return Counter(" ".join(tokens[i : i + n]) for n in (1, 2, 3) for i in range(len(tokens) - n + 1))


def _unit(vector: Sequence[float]) -> list[float]:
    """The vector scaled to unit length (as it is when it is zero)."""
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


class ModelEmbedder:
    """An embedding endpoint (OpenAI-compatible ``/v1/embeddings`` or Ollama ``/api/embed``) as an
    Embedder."""

    def __init__(self, model: str, embed: Callable[[list[str]], list[list[float]]]) -> None:
        self._model = model
        self._embed = embed

    @property
    def model(self) -> str:
        """The endpoint's model id."""
        return self._model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for the normalised texts."""
        return self._embed([normalise(t) for t in texts])


class CachedEmbedder:
    """An embedder that asks only for texts whose normalised sha is not cached for its model yet."""

    def __init__(self, inner: Embedder, cache: EmbeddingCache | None = None) -> None:
        self.inner = inner
        self.cache = cache
        self._local: dict[str, list[float]] = {}
        self.asked = 0

    @property
    def model(self) -> str:
        """The inner embedder's model."""
        return self.inner.model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors in order; each distinct normalised text is embedded at most once per model."""
        keys = [normalised_sha(t) for t in texts]
        self._load_cached(keys)
        wanted = self._unheld(keys, texts)
        if wanted:
            self._embed_new(wanted)
        return [self._local[k] for k in keys]

    def _unheld(self, keys: Sequence[str], texts: Sequence[str]) -> dict[str, str]:
        """The texts, by key, that neither this embedder nor the cache holds a vector of."""
        return {k: t for k, t in zip(keys, texts, strict=True) if k not in self._local}

    def _load_cached(self, keys: Sequence[str]) -> None:
        """Take from the cache the vectors of the keys this embedder does not hold yet."""
        missing = [k for k in dict.fromkeys(keys) if k not in self._local]
        if missing and self.cache is not None:
            self._local.update(self.cache.get_embeddings(self.model, missing))

    def _embed_new(self, wanted: Mapping[str, str]) -> None:
        """Embed texts neither this embedder nor the cache holds (by normalised sha), and cache them."""
        vectors = self.inner.embed(list(wanted.values()))
        self.asked += len(wanted)
        fresh = dict(zip(wanted, vectors, strict=True))
        self._local.update(fresh)
        if self.cache is not None:
            self.cache.put_embeddings(self.model, fresh)

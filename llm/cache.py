"""The response cache: a reply stored under the sha256 of what was asked, replayed byte for byte at $0.

The key covers the model id, a digest of the other parameters (schema, max tokens), the messages, the
temperature, the sample index, whether JSON was asked and the retry attempt, so sample 2 at 0.7 never
replays sample 1. The raw reply is stored, even one that did not parse: a replay parses it again and fails
the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ouroboros_gates.llm._types import ChatReply, ChatRequest, Usage

__all__ = ["ResponseCache", "cache_key", "canonical_json"]


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no spaces, non-ASCII kept: the same value always gives the same bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def cache_key(model_id: str, request: ChatRequest) -> str:
    """The sha256 (hex) naming ``request`` sent to ``model_id``."""
    params = {"schema": request.schema, "max_tokens": request.max_tokens}
    params_digest = hashlib.sha256(canonical_json(params).encode()).hexdigest()
    key = {
        "model": model_id,
        "params": params_digest,
        "messages": [dict(m) for m in request.messages],
        "temperature": request.temperature,
        "sample": request.sample,
        "json": request.schema is not None,
    }
    if request.attempt:  # absent on first attempts, so their keys stay those of plain requests
        key["attempt"] = request.attempt
    return hashlib.sha256(canonical_json(key).encode()).hexdigest()


class ResponseCache:
    """Replies on disk, one JSON file per key under ``directory/<2 hex>/<key>.json``, written atomically."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        """Where the reply for ``key`` lives."""
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ChatReply | None:
        """The stored reply as a replay (``cached=True``, cost 0), or None."""
        try:
            stored = json.loads(self.path(key).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except ValueError:  # a torn file cannot exist (atomic writes), but a hand-edited one can
            return None
        return ChatReply(
            text=stored["text"],
            data=stored["data"],
            usage=Usage(**stored["usage"]),
            model=stored["model"],
            cost_usd=0.0,
            cached=True,
            wall_s=0.0,
            load_s=None,
        )

    def put(self, key: str, reply: ChatReply) -> None:
        """Store ``reply`` under ``key`` (tmp file + rename: a reader never sees half a reply)."""
        record = asdict(replace(reply, cached=False))
        target = self.path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(canonical_json(record))
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*/*.json"))

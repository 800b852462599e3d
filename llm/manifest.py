"""Model manifests: ``ruleset/models/*.toml``, one per model, with its API and prices in USD per million
tokens.

A price change is a data change: it changes cost reports and nothing else.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from ouroboros_gates import ruleset
from ouroboros_gates.llm._types import Api, JsonMode, Usage
from ouroboros_gates.llm.errors import ModelRequestError

__all__ = ["MANIFEST_DIR", "ModelManifest", "Prices", "find_manifest", "list_manifests", "load_manifest"]

MANIFEST_DIR = Path(ruleset.__file__).resolve().parent / "models"
_PRICE_KEYS = ("input", "cache_read", "cache_write", "output")


@dataclass(frozen=True)
class Prices:
    """USD per million tokens: uncached input, cache read, cache write, output."""

    input: float
    cache_read: float
    cache_write: float
    output: float

    def cost(self, usage: Usage) -> float:
        """What ``usage`` costs in USD."""
        return (
            usage.input_tokens * self.input
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_creation_tokens * self.cache_write
            + usage.output_tokens * self.output
        ) / 1e6


@dataclass(frozen=True)
class ModelManifest:
    """One model: its id, the API and name it is called by, prices, context window, notes, and ``body``:
    fields every chat request to it carries (a provider's switches, such as DeepSeek's thinking mode)."""

    id: str
    api: Api
    model: str
    kind: Literal["chat", "embedding"]
    prices: Prices
    context_window: int
    max_output_tokens: int
    base_url: str | None
    dimensions: int | None
    notes: str
    path: Path
    body: dict[str, Any] = field(default_factory=dict, hash=False)
    json_mode: JsonMode = "json_schema"

    def cost(self, usage: Usage) -> float:
        """What ``usage`` costs on this model, in USD."""
        return self.prices.cost(usage)


def load_manifest(model_id: str, directory: Path | None = None) -> ModelManifest:
    """The manifest whose ``id`` (or file name) is ``model_id``; an error naming the model and the folder."""
    folder = directory or MANIFEST_DIR
    manifest = find_manifest(model_id, folder)
    if manifest is not None:
        return manifest
    known = ", ".join(sorted(m.id for m in list_manifests(folder))) or "none"
    raise ModelRequestError(f"no model manifest for {model_id!r} in {folder} (known: {known})")


def find_manifest(model_id: str, directory: Path | None = None) -> ModelManifest | None:
    """The manifest whose ``id`` (or file name) is ``model_id``, or None."""
    for manifest in list_manifests(directory):
        if model_id in (manifest.id, manifest.path.stem):
            return manifest
    return None


def list_manifests(directory: Path | None = None) -> list[ModelManifest]:
    """Every manifest in the folder, sorted by file name."""
    folder = directory or MANIFEST_DIR
    return [_read(path) for path in sorted(folder.glob("*.toml"))]


def _read(path: Path) -> ModelManifest:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        return _build(raw, path)
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ModelRequestError(f"{path}: invalid model manifest: {type(exc).__name__}: {exc}") from exc


def _build(raw: dict[str, Any], path: Path) -> ModelManifest:
    prices = raw["prices"]
    _check_price_keys(prices)
    api, kind, json_mode = _modes(raw)
    values = _price_values(prices)
    return ModelManifest(
        id=str(raw["id"]),
        api=cast(Api, api),
        model=str(raw.get("model", raw["id"])),
        kind=kind,
        prices=Prices(**values),
        context_window=int(raw["context_window"]),
        max_output_tokens=int(raw.get("max_output_tokens", 4096)),
        base_url=raw.get("base_url"),
        dimensions=int(raw["dimensions"]) if "dimensions" in raw else None,
        notes=str(raw.get("notes", "")).strip(),
        path=path,
        body=dict(raw.get("body", {})),
        json_mode=json_mode,
    )


def _check_price_keys(prices: dict[str, Any]) -> None:
    """No price the manifest format does not know."""
    unknown = set(prices) - set(_PRICE_KEYS)
    if unknown:
        raise ValueError(f"unknown price keys {sorted(unknown)}; expected {list(_PRICE_KEYS)}")


def _modes(raw: dict[str, Any]) -> tuple[Any, Any, Any]:
    """The manifest's ``api``, ``kind`` and ``json_mode``, each one of those known."""
    api = raw["api"]
    kind = raw.get("kind", "chat")
    json_mode = raw.get("json_mode", "json_schema")
    if json_mode not in ("json_schema", "json_object"):
        raise ValueError(f"json_mode must be json_schema or json_object, not {json_mode!r}")
    if api not in ("openai", "ollama") or kind not in ("chat", "embedding"):
        raise ValueError(f"api must be openai|ollama and kind chat|embedding, not {api!r}/{kind!r}")
    return api, kind, json_mode


def _price_values(prices: dict[str, Any]) -> dict[str, float]:
    """Each price in USD per million tokens; none may be negative."""
    # a cache price left out is charged as plain input: never cheaper than the provider could bill
    values = {
        key: float(prices[key] if key in ("input", "output") else prices.get(key, prices["input"]))
        for key in _PRICE_KEYS
    }
    if any(v < 0 for v in values.values()):
        raise ValueError("prices cannot be negative")
    return values

"""The endpoint a process talks to, and its clients, from its settings (``OURO_MODEL_*``, ``OURO_EMBED_*``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ouroboros_gates.llm._types import Api, Endpoint
from ouroboros_gates.llm.budget import Budget
from ouroboros_gates.llm.cache import ResponseCache
from ouroboros_gates.llm.chat import ChatClient
from ouroboros_gates.llm.embed import EmbeddingClient
from ouroboros_gates.llm.manifest import find_manifest, load_manifest
from ouroboros_gates.llm.metered import MeteredClient

if TYPE_CHECKING:
    from ouroboros_gates.schemas.settings import Settings

__all__ = ["DEFAULT_URLS", "embedder_from_settings", "endpoint_from_settings", "metered_from_settings"]

DEFAULT_URLS: dict[str, str] = {"ollama": "http://127.0.0.1:11434", "openai": "http://127.0.0.1:8000/v1"}


def endpoint_from_settings(settings: Settings, *, embed: bool = False) -> Endpoint | None:
    """The chat (or embedding) endpoint the settings name, or None when no model is configured.

    The model id is looked up among the manifests; a manifest supplies the API, the provider's model name and
    the URL that the settings leave out. A model without a manifest is called by its id, on the API and URL
    the settings give (``openai`` and a local server by default).
    """
    model_id = settings.embed_model if embed else settings.model
    if not model_id:
        return None
    manifest = find_manifest(model_id)
    api = settings.embed_api if embed else settings.model_api
    chosen: Api = api or (manifest.api if manifest else "openai")
    url = (settings.embed_url if embed else settings.model_url) or (manifest.base_url if manifest else None)
    key = settings.embed_api_key if embed else settings.model_api_key
    return Endpoint(
        api=chosen,
        base_url=url or DEFAULT_URLS[chosen],
        model=manifest.model if manifest else model_id,
        api_key=key.get_secret_value() if key is not None else None,
        timeout_s=settings.model_timeout_s,
        keep_alive_s=settings.model_keep_alive_s,
        extra_body=(manifest.body or None) if manifest else None,
        json_mode=manifest.json_mode if manifest else "json_schema",
    )


def metered_from_settings(settings: Settings, budget: Budget | None = None) -> MeteredClient | None:
    """The configured chat model under the settings' ceilings (or ``budget``), replaying from
    ``<state>/responses``; None when no model is configured. Its manifest must exist: a model without prices
    cannot be metered."""
    endpoint = endpoint_from_settings(settings)
    if endpoint is None or settings.model is None:
        return None
    return MeteredClient(
        ChatClient(endpoint),
        load_manifest(settings.model),
        usd_ceiling=settings.model_usd_ceiling,
        call_ceiling=settings.model_call_ceiling,
        cache=ResponseCache(settings.state_dir / "responses"),
        budget=budget,
    )


def embedder_from_settings(settings: Settings, budget: Budget | None = None) -> EmbeddingClient | None:
    """The configured embedding model, its vectors cached under ``<state>/embeddings``, priced by its manifest
    (when there is one) against ``budget``; None when unset."""
    endpoint = endpoint_from_settings(settings, embed=True)
    if endpoint is None:
        return None
    manifest = find_manifest(settings.embed_model) if settings.embed_model else None
    return EmbeddingClient(
        endpoint, cache_dir=settings.state_dir / "embeddings", manifest=manifest, budget=budget
    )

"""The endpoint a process talks to, and its clients, from its settings (``OURO_MODEL_*``,
``OURO_EMBED_*``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ouroboros_gates.llm._types import Api, Endpoint, JsonMode
from ouroboros_gates.llm.budget import Budget
from ouroboros_gates.llm.cache import ResponseCache
from ouroboros_gates.llm.chat import ChatClient
from ouroboros_gates.llm.embed import EmbeddingClient
from ouroboros_gates.llm.manifest import ModelManifest, find_manifest, load_manifest
from ouroboros_gates.llm.metered import MeteredClient

if TYPE_CHECKING:
    from pydantic import SecretStr

    from ouroboros_gates.schemas.settings import Settings

__all__ = ["DEFAULT_URLS", "embedder_from_settings", "endpoint_from_settings", "metered_from_settings"]

DEFAULT_URLS: dict[str, str] = {"ollama": "http://127.0.0.1:11434", "openai": "http://127.0.0.1:8000/v1"}


def endpoint_from_settings(settings: Settings, *, embed: bool = False) -> Endpoint | None:
    """The chat (or embedding) endpoint the settings name, or None when no model is configured.

    The model id is looked up among the manifests; a manifest supplies the API, the provider's model name
    and the URL that the settings leave out. A model without a manifest is called by its id, on the API and
    URL the settings give (``openai`` and a local server by default).
    """
    named = _Named.embedding(settings) if embed else _Named.chat(settings)
    if not named.model:
        return None
    manifest = find_manifest(named.model)
    api, url = _api_and_url(named, manifest)
    model, extra_body, json_mode = _manifest_choices(manifest, named.model)
    return Endpoint(
        api=api,
        base_url=url,
        model=model,
        api_key=named.api_key(),
        timeout_s=settings.model_timeout_s,
        keep_alive_s=settings.model_keep_alive_s,
        extra_body=extra_body,
        json_mode=json_mode,
    )


def _manifest_choices(
    manifest: ModelManifest | None, model: str
) -> tuple[str, dict[str, Any] | None, JsonMode]:
    """The provider's model name, the extra request body and the JSON mode: the manifest's, else the
    model's id, none, and JSON schema."""
    if not manifest:
        return model, None, "json_schema"
    return manifest.model, manifest.body or None, manifest.json_mode


class _Named(NamedTuple):
    """What the settings name for the chat model, or for the embedding model."""

    model: str | None
    api: Api | None
    url: str | None
    key: SecretStr | None

    @classmethod
    def chat(cls, settings: Settings) -> _Named:
        return cls(settings.model, settings.model_api, settings.model_url, settings.model_api_key)

    @classmethod
    def embedding(cls, settings: Settings) -> _Named:
        return cls(settings.embed_model, settings.embed_api, settings.embed_url, settings.embed_api_key)

    def api_key(self) -> str | None:
        """The key's value, when the settings give one."""
        return self.key.get_secret_value() if self.key is not None else None


def _api_and_url(named: _Named, manifest: ModelManifest | None) -> tuple[Api, str]:
    """The API and URL the settings give, else the manifest's, else ``openai`` on a local server."""
    api: Api = named.api or (manifest.api if manifest else "openai")
    return api, named.url or (manifest.base_url if manifest else None) or DEFAULT_URLS[api]


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

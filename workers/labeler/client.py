"""The labeler's model calls: the configured endpoint, each request carrying the keep-alive of its batch.

Calls go through the metered client when the model has a manifest (a local model's prices are zero, so
its ceilings count calls); one HTTP client is kept per keep-alive value.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ouroboros_gates.llm import (
    ChatClient,
    ChatReply,
    ChatRequest,
    Endpoint,
    MeteredClient,
    endpoint_from_settings,
    find_manifest,
)
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.labeler.run import ChatFn

__all__ = ["KeepAliveChat", "chat_from_settings"]


@dataclass
class KeepAliveChat:
    """Chat with one endpoint, the keep-alive set per call (``keep_alive_s``)."""

    endpoint: Endpoint
    keep_alive_s: float | None = None
    _clients: dict[float | None, ChatClient] = field(default_factory=dict, init=False)

    def chat(self, request: ChatRequest) -> ChatReply:
        """One call with the current keep-alive."""
        client = self._clients.get(self.keep_alive_s)
        if client is None:
            client = ChatClient(replace(self.endpoint, keep_alive_s=self.keep_alive_s))
            self._clients[self.keep_alive_s] = client
        return client.chat(request)

    def close(self) -> None:
        """Close every HTTP client."""
        for client in self._clients.values():
            client.close()
        self._clients.clear()


def chat_from_settings(settings: Settings) -> tuple[ChatFn | None, str, KeepAliveChat | None]:
    """The labeler's chat function, the model's name and the client to close; None and ``"none"`` when no
    model is configured (the requests then stay queued)."""
    endpoint = endpoint_from_settings(settings)
    if endpoint is None:
        return None, "none", None
    inner = KeepAliveChat(endpoint)
    manifest = find_manifest(settings.model) if settings.model else None
    caller = (
        MeteredClient(
            inner, manifest, usd_ceiling=settings.model_usd_ceiling, call_ceiling=settings.model_call_ceiling
        )
        if manifest is not None
        else inner
    )

    def chat(request: ChatRequest, keep_alive_s: float) -> ChatReply:
        inner.keep_alive_s = keep_alive_s
        return caller.chat(request)

    return chat, endpoint.model, inner

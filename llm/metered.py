"""The metered client: a chat client under a budget (USD and call ceilings, reserved before each call),
priced by a model manifest, with the smoke check and the response cache."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Protocol

from ouroboros_gates.llm._types import ChatReply, ChatRequest, Usage
from ouroboros_gates.llm.budget import Budget
from ouroboros_gates.llm.cache import ResponseCache, cache_key
from ouroboros_gates.llm.chat import finish_reply
from ouroboros_gates.llm.errors import AccountError, ReplyParseError
from ouroboros_gates.llm.manifest import ModelManifest

__all__ = ["Chat", "MeteredClient", "check_usage"]

_SMOKE = ChatRequest(messages=({"role": "user", "content": "Reply with the single word: ok"},), max_tokens=8)
_MESSAGE_OVERHEAD = 16  # tokens a chat template adds around each message, generously
_REQUEST_OVERHEAD = 64  # and around the whole conversation (system preamble, generation prompt)


class Chat(Protocol):
    """Anything with ``chat(request) -> ChatReply``: a ``ChatClient``, a fake, another wrapper."""

    def chat(self, request: ChatRequest) -> ChatReply: ...


class MeteredClient:
    """A chat client under USD and call ceilings, priced by a manifest, replaying from a response cache.

    ``budget`` shares one set of ceilings between clients; otherwise the client has its own.
    """

    def __init__(
        self,
        client: Chat,
        manifest: ModelManifest,
        *,
        usd_ceiling: float | None = None,
        call_ceiling: int | None = None,
        cache: ResponseCache | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.client = client
        self.manifest = manifest
        self.cache = cache
        self.budget = budget or Budget(usd_ceiling, call_ceiling)
        self.cache_hits = 0
        self.usage = Usage()
        self._lock = threading.Lock()

    @property
    def spent_usd(self) -> float:
        """USD settled so far (the budget's, when shared)."""
        return self.budget.spent_usd

    @property
    def calls(self) -> int:
        """Requests sent so far, answered or not (the budget's, when shared)."""
        return self.budget.calls

    @property
    def usd_ceiling(self) -> float | None:
        """The USD ceiling, or None."""
        return self.budget.usd_ceiling

    @property
    def call_ceiling(self) -> int | None:
        """The call ceiling, or None."""
        return self.budget.call_ceiling

    def chat(self, request: ChatRequest) -> ChatReply:
        """A cached replay at $0, or one call within the ceilings; ``BudgetExhausted`` when it would pass one.

        A reply that does not parse is paid, counted, cached and raised as ``ReplyParseError`` with its reply.
        """
        request = self._bounded(request)
        key = cache_key(self.manifest.id, request) if self.cache is not None else ""
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            with self._lock:
                self.cache_hits += 1
            return finish_reply(hit, request)
        reply, error = self._call(request)
        if self.cache is not None:
            self.cache.put(key, reply)
        if error is not None:
            raise error
        return reply

    def smoke(self) -> ChatReply:
        """One tiny uncached call whose usage must be present and non-zero: run it before any paid run."""
        reply, error = self._call(_SMOKE)
        if error is not None:
            raise error
        return reply

    def worst_case_usd(self, request: ChatRequest) -> float:
        """An upper bound of what ``request`` can cost: every byte a token, uncached, all output tokens
        used."""
        request = self._bounded(request)
        prompt = _REQUEST_OVERHEAD + sum(
            len(m["content"].encode()) + _MESSAGE_OVERHEAD for m in request.messages
        )
        if request.schema is not None:
            prompt += len(str(request.schema).encode())  # some servers put the schema in the prompt
        prices = self.manifest.prices
        worst_input = max(prices.input, prices.cache_read, prices.cache_write)
        return (prompt * worst_input + (request.max_tokens or 0) * prices.output) / 1e6

    def _bounded(self, request: ChatRequest) -> ChatRequest:
        """The request with a ``max_tokens`` (the manifest's) so that its cost has a bound."""
        if request.max_tokens is not None:
            return request
        return replace(request, max_tokens=self.manifest.max_output_tokens)

    def _call(self, request: ChatRequest) -> tuple[ChatReply, ReplyParseError | None]:
        """The priced reply, and the parse error it raised (a bad answer is paid for all the same)."""
        error: ReplyParseError | None = None
        with self.budget.reserve(self.worst_case_usd(request)) as reservation:
            try:
                reply = self.client.chat(request)
            except ReplyParseError as exc:
                if exc.reply is None:
                    raise
                reply, error = replace(exc.reply, data=None), exc
            reservation.cost_usd = self.manifest.cost(reply.usage)
            check_usage(reply, self.manifest.id)
        with self._lock:
            self.usage = self.usage + reply.usage
        reply = replace(reply, cost_usd=reservation.cost_usd, cached=False)
        if error is not None:
            error.reply = reply
        return reply, error


def check_usage(reply: ChatReply, model_id: str) -> None:
    """Refuse a reply whose usage is missing or zero (or that has text but no output tokens)."""
    usage = reply.usage
    if usage.total == 0 or (reply.text and usage.output_tokens == 0):
        raise AccountError(
            f"a working-looking zero: {model_id} replied {len(reply.text)} characters but reported usage "
            f"input={usage.input_tokens} cache_read={usage.cache_read_tokens} output={usage.output_tokens}; "
            "check the account, the key and the endpoint before any paid run"
        )

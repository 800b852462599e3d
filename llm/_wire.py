"""HTTP to a model server: the one place where httpx's exceptions and HTTP statuses become ``LlmError``."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from ouroboros_gates.llm._types import Endpoint
from ouroboros_gates.llm.errors import (
    AccountError,
    LlmError,
    ModelRequestError,
    ReplyParseError,
    TransientLlmError,
)

__all__ = ["http_client", "post_json"]

_ACCOUNT = {401, 402, 403}
_TRANSIENT = {408, 409, 425, 429}
_SNIPPET = 300


def http_client(endpoint: Endpoint, transport: httpx.BaseTransport | None) -> httpx.Client:
    """A pooled client for one endpoint; room for the eight requests in flight that callers allow."""
    headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
    return httpx.Client(
        base_url=endpoint.base_url,
        headers=headers,
        timeout=httpx.Timeout(endpoint.timeout_s, connect=min(endpoint.timeout_s, 10.0)),
        limits=httpx.Limits(max_connections=16, max_keepalive_connections=16),
        transport=transport,
    )


def post_json(client: httpx.Client, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """POST ``body`` as JSON; the reply's JSON object and the wall seconds, or an ``LlmError``."""
    where = f"{client.base_url}{path}"
    started = time.perf_counter()
    response = _post(client, path, body, where)
    wall_s = time.perf_counter() - started
    if response.status_code >= 400:
        raise status_error(response.status_code, _message(response.text), where)
    payload = _json_object(response, where)
    _raise_reported_error(payload, where)
    return payload, wall_s


def _post(client: httpx.Client, path: str, body: dict[str, Any], where: str) -> httpx.Response:
    """The server's response, whatever its status; no response at all is a ``TransientLlmError``."""
    try:
        return client.post(path, json=body)
    except httpx.TimeoutException as exc:
        raise TransientLlmError(
            f"{where}: no reply within {client.timeout.read}s ({type(exc).__name__})"
        ) from exc
    except httpx.HTTPError as exc:
        raise TransientLlmError(f"{where}: {type(exc).__name__}: {exc}") from exc


def _json_object(response: httpx.Response, where: str) -> dict[str, Any]:
    """The response's body as a JSON object; anything else is a ``ReplyParseError``."""
    try:
        payload = response.json()
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReplyParseError(f"{where}: the server's reply is not JSON", text=response.text) from exc
    if not isinstance(payload, dict):
        raise ReplyParseError(f"{where}: the server's reply is not a JSON object", text=response.text)
    return payload


def _raise_reported_error(payload: dict[str, Any], where: str) -> None:
    """A 200 whose body reports an error (OpenRouter does, for some provider failures) as the error its
    ``code`` means (502 when it has none)."""
    error = payload.get("error")
    if error:
        code = error.get("code") if isinstance(error, dict) else None
        status = code if isinstance(code, int) else 502
        raise status_error(status, _message(json.dumps(payload)), where)


def status_error(status: int, message: str, where: str) -> LlmError:
    """The error an HTTP status means: account, transient (429, 5xx) or a refused request."""
    text = f"{where}: HTTP {status}: {message}"
    if status in _ACCOUNT:
        return AccountError(text, status=status)
    if status in _TRANSIENT or status >= 500:
        return TransientLlmError(text, status=status)
    return ModelRequestError(text, status=status)


def _message(body: str) -> str:
    """The provider's error message, short: ``error.message`` when the body is JSON."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return body.strip()[:_SNIPPET] or "(empty body)"
    error = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])[:_SNIPPET]
    return str(error)[:_SNIPPET]

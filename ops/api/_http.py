"""What every request passes before a route sees it: the trusted hosts, the body's size and deadline, the
bearer token of the writes, and one error shape (400 naming the parameter) for a request that does not fit.

- Hosts: a ``Host`` header other than 127.0.0.1, localhost, [::1], the bind address or one of
  ``OURO_API_HOSTS`` is refused with 400, so a page on another origin cannot read the API through DNS
  rebinding.
- Body: larger than ``MAX_BODY_BYTES`` is 413, refused from its ``Content-Length`` before a byte of it is
  read (FastAPI's ``max_body_size``); a body that does not arrive whole within ``BODY_TIMEOUT_S`` is 408.
  Headers that trickle in are timed out by the server's protocol (``ops.api.serve``).
- Token: writes need ``Authorization: Bearer $OURO_API_TOKEN``: 401 without it or with another one, 403 when
  the server has no token (writes are off), 400 for a token that is not printable ASCII.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Annotated, Any

from fastapi import FastAPI, Header, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ouroboros_gates.schemas.settings import Settings

__all__ = [
    "BODY_TIMEOUT_S",
    "MAX_BODY_BYTES",
    "WRITE_RESPONSES",
    "BodyDeadline",
    "guard",
    "token_check",
    "trusted_hosts",
]

MAX_BODY_BYTES = 1 << 20
"""The largest request body (1 MiB): messages carry ids and digests, never whole records."""

BODY_TIMEOUT_S = 15.0
"""How long a request body may take to arrive, once its headers have."""

_WILDCARDS = {"", "0.0.0.0", "::", "[::]"}

WRITE_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"description": "A parameter or the bearer token is malformed."},
    401: {"description": "No bearer token, or not the server's (OURO_API_TOKEN)."},
    403: {"description": "Writes are off: the server has no OURO_API_TOKEN."},
    413: {"description": f"The body is larger than {MAX_BODY_BYTES} bytes."},
}


def trusted_hosts(settings: Settings) -> list[str]:
    """The host names a request may name: the loopback names, the bind address, and ``OURO_API_HOSTS``."""
    hosts = ["127.0.0.1", "localhost", "[::1]", *settings.api_host_names]
    if settings.api_host not in _WILDCARDS:
        hosts.append(f"[{settings.api_host}]" if ":" in settings.api_host else settings.api_host)
    return list(dict.fromkeys(host.lower() for host in hosts))


class _BodyTimeout(HTTPException):
    """The body did not arrive in time (an HTTPException, so the body reader passes it on as it is)."""

    def __init__(self) -> None:
        super().__init__(408, f"the request body did not arrive within {BODY_TIMEOUT_S:g} s")


class BodyDeadline:
    """ASGI middleware: the whole body must arrive within ``timeout_s`` of the request's start (408 if not).

    Only reads of a body still arriving are timed: once the last chunk is in, ``receive`` is passed through,
    so a response listening for the client's disconnect is never cut."""

    def __init__(self, app: ASGIApp, timeout_s: float = BODY_TIMEOUT_S) -> None:
        self.app, self.timeout_s = app, timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deadline = asyncio.get_running_loop().time() + self.timeout_s
        complete = False

        async def timed() -> Message:
            nonlocal complete
            if complete:
                return await receive()
            left = deadline - asyncio.get_running_loop().time()
            try:
                message = await asyncio.wait_for(receive(), timeout=max(left, 0.0))
            except TimeoutError:
                raise _BodyTimeout from None
            complete = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        await self.app(scope, timed, send)


def token_check(settings: Settings) -> Any:
    """The dependency that lets a write through only with the server's bearer token."""

    def require_token(
        authorization: Annotated[str | None, Header(description="``Bearer <OURO_API_TOKEN>``.")] = None,
    ) -> None:
        expected = settings.api_token
        if not expected:
            raise HTTPException(403, "writes are off: the server has no token (set OURO_API_TOKEN)")
        scheme, _, given = (authorization or "").strip().partition(" ")
        given = given.strip()
        if given and not (given.isascii() and given.isprintable()):
            raise HTTPException(400, "malformed bearer token: not printable ASCII")
        if scheme.lower() != "bearer" or not secrets.compare_digest(given.encode(), expected.encode()):
            raise HTTPException(
                401,
                "a bearer token (OURO_API_TOKEN) is required to write",
                headers={"WWW-Authenticate": "Bearer"},
            )

    return require_token


async def _bad_request(_request: Request, exc: Exception) -> JSONResponse:
    """A request that does not fit its route (an out-of-range number, a missing field): 400, naming where."""
    assert isinstance(exc, RequestValidationError)
    errors = [
        {"loc": [str(part) for part in error["loc"]], "msg": error["msg"], "type": error["type"]}
        for error in exc.errors()
    ]
    return JSONResponse({"detail": errors}, status_code=400)


def guard(api: FastAPI, settings: Settings, body_timeout_s: float = BODY_TIMEOUT_S) -> None:
    """Put the host check, the body deadline and the 400 handler on ``api`` (the size limit is its own)."""
    api.add_exception_handler(RequestValidationError, _bad_request)
    api.add_middleware(BodyDeadline, timeout_s=body_timeout_s)
    api.add_middleware(TrustedHostMiddleware, allowed_hosts=trusted_hosts(settings))

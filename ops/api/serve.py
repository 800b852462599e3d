"""How uvicorn serves the API: an HTTP/1.1 protocol whose request head must arrive within a deadline.

uvicorn times out an idle keep-alive connection but not a request head that trickles in a byte at a time
(nor a connection that sends nothing at all), so a few slow clients would hold every connection. The
protocol here arms a timer when a connection opens, and again when a response is done and the next request
starts to arrive, and drops it once the head is parsed; when it fires the client gets ``408`` and the
connection is closed. The head's size is bounded by h11 (``HEAD_MAX_BYTES``); the body's deadline and size
are the app's (``ops.api._http``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from ouroboros_gates.schemas.settings import Settings

__all__ = ["HEAD_MAX_BYTES", "HEAD_TIMEOUT_S", "KEEP_ALIVE_S", "HeadDeadlineProtocol", "server_options"]

HEAD_TIMEOUT_S = 10.0
"""How long a request's line and headers may take to arrive."""

HEAD_MAX_BYTES = 32 * 1024
"""The largest request head h11 buffers before it answers 400."""

KEEP_ALIVE_S = 5
"""How long an idle keep-alive connection is held between requests."""

_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class HeadDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, with a deadline on each request's head (408, then the connection closes)."""

    head_timeout_s: float = HEAD_TIMEOUT_S

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._timed_cycle: object = None  # the request cycle that was current when the timer was armed

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """A connection opens: its first request's head must arrive in time."""
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        """Bytes arrive: between requests they start the next head, whose deadline starts with them."""
        if self._head_timer is None and (self.cycle is None or self.cycle.response_complete):
            self._arm()
        super().data_received(data)

    def handle_events(self) -> None:
        """Parse what arrived; a new request cycle means its head is complete."""
        super().handle_events()
        if self._head_timer is not None and self.cycle is not self._timed_cycle:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        """The connection is gone: nothing left to time."""
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._timed_cycle = self.cycle
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_timed_out)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            self.logger.info(
                "request head not received within %.0f s; closing the connection", self.head_timeout_s
            )
            self.transport.write(_TIMED_OUT)
            self.transport.close()


def server_options(settings: Settings, **app_options: Any) -> dict[str, Any]:
    """uvicorn's options for the API on ``settings``: the app, the guarded protocol and its bounds.

    ``uvicorn.run(**server_options(settings), host=..., port=...)``; ``app_options`` go to ``create_app``."""
    from ouroboros_gates.ops.api import create_app

    return {
        "app": create_app(settings, **app_options),
        "http": HeadDeadlineProtocol,
        "timeout_keep_alive": KEEP_ALIVE_S,
        "h11_max_incomplete_event_size": HEAD_MAX_BYTES,
    }

"""The CSF envelope: ``{"ts": …, "event_type": …, "event": {…}}`` around one harness line.

The envelope adds only when the harness saw the line (``ts``) and what it says the line is
(``event_type``); the wrapped ``event`` is read by its own format's reader (stream-json in practice), with
the envelope's time and the whole envelope kept as the event's ``raw``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from ouroboros_gates.harness.context import text, timestamp

__all__ = ["Envelope", "unwrap"]


class Envelope(NamedTuple):
    """An opened envelope: the wrapped line, its type as the harness named it, and when it was seen."""

    event: dict[str, Any]
    event_type: str | None
    ts: datetime | None


def unwrap(doc: dict[str, Any]) -> Envelope:
    """Open a CSF envelope (``detect.classify`` has checked that ``event`` is an object)."""
    inner = doc.get("event")
    return Envelope(
        event=inner if isinstance(inner, dict) else {},
        event_type=text(doc.get("event_type")),
        ts=timestamp(doc.get("ts")) or timestamp(doc.get("timestamp")),
    )

"""Which harness format a JSON object is in, and which one a file is in.

The rule, applied to every object on its own (so a file that mixes formats is read right line by line):

1. ``event_type`` and an object ``event``             -> the CSF envelope (its ``event`` is read again)
2. ``hook_event_name``                                -> a Claude Code hook payload
3. ``sessionId``/``parentUuid``/``leafUuid``/``isSidechain``, or a type only transcripts write
   (``summary``, ``file-history-snapshot``, ``queue-operation``, ``progress``) -> a Claude Code transcript
   line
4. a string ``type`` with ``session_id``, or a stream-json ``type`` -> a ``--output-format stream-json``
   line
5. an OpenHands event (``source`` with ``action`` or ``observation``), or a ``history`` of them
   -> ``openhands``
6. a SWE-agent trajectory (``trajectory``, or a ``history`` of role messages) -> ``swe-agent``
7. anything else                                      -> unknown (kept as an ``other`` event, never rejected)

A file's format is the one its first objects share, ``mixed`` when they differ, ``empty`` when it has
none; the reader never needs it, it is what ``ouro corpus stats`` shows.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from itertools import islice
from pathlib import Path
from typing import Any

from ouroboros_gates.harness.context import first_item
from ouroboros_gates.harness.openhands import is_openhands_event
from ouroboros_gates.harness.source import Source
from ouroboros_gates.harness.swe_agent import is_trajectory

__all__ = ["AGENTS", "EXPECTED", "Format", "agent_of", "classify", "detect_format"]

EXPECTED = (
    "CSF envelope lines, Claude Code stream-json, a Claude Code transcript or hook payloads "
    "(JSON lines or JSON), a SWE-agent trajectory (.traj) or OpenHands events"
)
"""What a harness log may hold: named when a file holds none of it."""

_TRANSCRIPT_KEYS = ("sessionId", "parentUuid", "leafUuid", "isSidechain")
_TRANSCRIPT_TYPES = frozenset({"summary", "file-history-snapshot", "queue-operation", "progress"})
_STREAM_TYPES = frozenset({"system", "assistant", "user", "result", "stream_event"})
_PEEK = 50


class Format(StrEnum):
    """A harness log format (of one object, or of a whole file)."""

    ENVELOPE = "csf-envelope"
    STREAM_JSON = "stream-json"
    TRANSCRIPT = "transcript"
    HOOK = "hook"
    SWE_AGENT = "swe-agent"
    OPENHANDS = "openhands"
    UNKNOWN = "unknown"
    MIXED = "mixed"
    EMPTY = "empty"


AGENTS = {
    Format.ENVELOPE: "claude-code",
    Format.STREAM_JSON: "claude-code",
    Format.TRANSCRIPT: "claude-code",
    Format.HOOK: "claude-code",
    Format.SWE_AGENT: "swe-agent",
    Format.OPENHANDS: "openhands",
}
"""The agent (harness) that writes each format."""


def agent_of(formats: Iterable[str]) -> str:
    """The agent that wrote a run's objects (``mixed`` for several, ``unknown`` for none known)."""
    found = _agents(formats)
    return found.pop() if len(found) == 1 else ("mixed" if found else "unknown")


def _agents(formats: Iterable[str]) -> set[str]:
    """The agents that write the formats known among ``formats``."""
    return {AGENTS[Format(name)] for name in formats if Format(name) in AGENTS}


def classify(doc: dict[str, Any]) -> Format:
    """The format of one JSON object, by the keys only its format writes."""
    if "event_type" in doc and isinstance(doc.get("event"), dict):
        return Format.ENVELOPE
    if isinstance(doc.get("hook_event_name"), str):
        return Format.HOOK
    found = _claude_code_line(doc)
    if found is not None:
        return found
    if _is_openhands(doc):
        return Format.OPENHANDS
    if is_trajectory(doc):
        return Format.SWE_AGENT
    return Format.UNKNOWN


def _claude_code_line(doc: dict[str, Any]) -> Format | None:
    """A transcript line or a stream-json line, by its keys and its ``type``; None for neither."""
    kind = doc.get("type")
    kind = kind if isinstance(kind, str) else None
    if _is_transcript_line(doc, kind):
        return Format.TRANSCRIPT
    if kind is not None and _is_stream_line(doc, kind):
        return Format.STREAM_JSON
    return None


def _is_transcript_line(doc: dict[str, Any], kind: str | None) -> bool:
    """A transcript line: a key only transcripts write, or a type only they have."""
    return any(key in doc for key in _TRANSCRIPT_KEYS) or kind in _TRANSCRIPT_TYPES


def _is_stream_line(doc: dict[str, Any], kind: str) -> bool:
    """A stream-json line (of a ``type``): a ``session_id``, or a type stream-json writes."""
    return "session_id" in doc or kind in _STREAM_TYPES


def _is_openhands(doc: dict[str, Any]) -> bool:
    """An OpenHands event, or an evaluation's line holding a conversation's events as ``history``."""
    return is_openhands_event(doc) or _openhands_history(doc)


def _openhands_history(doc: dict[str, Any]) -> bool:
    first = first_item(doc.get("history"))
    return isinstance(first, dict) and is_openhands_event(first)


def detect_format(path: Path | str) -> Format:
    """The format the first objects of ``path`` share (``mixed`` if they differ, ``empty`` if none)."""
    objects = iter(Source(Path(path)))
    try:
        seen = {classify(doc) for _, doc in islice(objects, _PEEK)}
    finally:
        objects.close()  # releases the file now, not when the generator is collected
    if not seen:
        return Format.EMPTY
    return seen.pop() if len(seen) == 1 else Format.MIXED

"""What the first objects of a log file say: its format, the session it belongs to, and its layout.

Asked of every file a folder holds when paths become runs (``paths``), so each version of a file (its
path, modification time and size) is read once, and only its first objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Any

from ouroboros_gates.harness.context import field_at, text
from ouroboros_gates.harness.detect import Format, classify
from ouroboros_gates.harness.source import Layout, Source
from ouroboros_gates.schemas.errors import CorpusError

__all__ = [
    "LOG_SUFFIXES",
    "format_of",
    "has_result_lines",
    "hook_session",
    "session_id",
    "unknown_keys",
    "whole_run",
]

LOG_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json", ".traj"})
_PEEK = 50


@dataclass(frozen=True)
class _Peek:
    """What the first objects of a file say: the first one's format, its session, and its layout."""

    format: Format | None = None
    session: str | None = None
    array: bool = False
    """The file is one JSON array (an event list), not lines or one object."""
    lines: bool = True
    """The file holds JSON lines (not one document spread over several lines)."""


def _peek(path: Path) -> _Peek:
    """What the first objects of a log file say (nothing for a file that is no log, or that cannot be read:
    the reader names it when it comes to read it)."""
    if path.suffix not in LOG_SUFFIXES:
        return _Peek()
    try:
        stat = path.stat()
        return _peek_version(path, stat.st_mtime_ns, stat.st_size) if path.is_file() else _Peek()
    except (OSError, CorpusError):  # deleted since it was listed, or not readable
        return _Peek()


def unknown_keys(path: Path) -> list[str] | None:
    """The first object's keys (up to 12) when none of the file's first objects is in a known format; None
    for a log, and for a file that holds no JSON object. Raises ``CorpusError`` when the file cannot be
    opened."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read: {exc.strerror}") from exc
    return _unknown_version(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4096)
def _unknown_version(path: Path, _mtime_ns: int, _size: int) -> list[str] | None:
    objects = iter(Source(path))
    keys: list[str] | None = None
    try:
        for _line, doc in islice(objects, _PEEK):
            if _format_of_object(doc)[0] is not Format.UNKNOWN:
                return None
            keys = sorted(doc)[:12] if keys is None else keys
    finally:
        objects.close()
    return keys


@lru_cache(maxsize=4096)
def _peek_version(path: Path, _mtime_ns: int, _size: int) -> _Peek:
    """``_peek`` for one version of a file (a folder's files are asked about once per listing)."""
    source = Source(path)
    objects = iter(source)
    first: Format | None = None
    try:
        for _line, doc in islice(objects, _PEEK):
            found, inner = _format_of_object(doc)
            first = first or found
            session = _session_of(inner, first)
            if session is not None:
                return _Peek(first, session, _is_array(path), source.layout is not Layout.DOCUMENT)
    finally:
        objects.close()
    return _Peek(first, None, _is_array(path), source.layout is not Layout.DOCUMENT)


def _format_of_object(doc: dict[str, Any]) -> tuple[Format | None, object]:
    """The format of one object, and the object that carries its session (an envelope's event)."""
    found = classify(doc)
    inner = doc.get("event") if found is Format.ENVELOPE else doc
    if _is_hook_envelope(found, inner):
        found = Format.HOOK  # the hook's own log: its payloads in envelopes
    return found, inner


def _is_hook_envelope(found: Format, inner: object) -> bool:
    """Whether an object is an envelope around a hook payload."""
    return found is Format.ENVELOPE and isinstance(inner, dict) and classify(inner) is Format.HOOK


def _session_of(inner: object, first: Format | None) -> str | None:
    """The session id ``inner`` carries (``sessionId`` in a transcript, else ``session_id``), if any."""
    key = "sessionId" if first is Format.TRANSCRIPT else "session_id"
    return text(field_at(inner, key))


def _is_array(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(256).lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"["


def session_id(path: Path) -> str | None:
    """The ``sessionId`` the first lines of a Claude Code transcript carry (a file whose first object is a
    transcript line); None for any other file."""
    if path.name == "events.jsonl":
        return None  # a harness run keeps its folder's name, whatever its lines are
    found = _peek(path)
    return found.session if found.format is Format.TRANSCRIPT else None


def hook_session(path: Path) -> str | None:
    """The ``session_id`` of a hook log (payloads, or the hook's own envelopes of them); None for another
    file."""
    found = _peek(path)
    return found.session if found.format is Format.HOOK else None


_READ_BY_READERS = frozenset({Format.TRANSCRIPT, Format.HOOK, Format.SWE_AGENT, Format.OPENHANDS})


def has_result_lines(path: Path) -> bool:
    """Whether the file is JSON lines whose usage is in result lines (CSF envelopes, stream-json, or
    nothing known: what jq reads line by line), rather than a transcript, a hook log, another agent's log
    or a JSON document (what the readers read)."""
    found = _peek(path)
    return found.format not in _READ_BY_READERS and found.lines


def format_of(path: Path) -> Format | None:
    """The format of a log file's first object (None for an empty file or one that is no log)."""
    return _peek(path).format


def whole_run(path: Path) -> bool:
    """Whether the file holds a run on its own: a SWE-agent trajectory, or an OpenHands event list (one
    array)."""
    found = _peek(path)
    return found.format is Format.SWE_AGENT or (found.format is Format.OPENHANDS and found.array)

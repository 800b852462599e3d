"""A session's log, parsed once: each hook call reads only the lines appended since the last one.

The gate server keeps one ``SessionLog`` per ``<state>/<session>/events.jsonl``. Lines are typed by the
corpus readers' own per-format functions, in the order ``harness.Reader`` applies them (the CSF
envelope opened first, then a hook payload, a transcript line or a stream-json line; anything else an
``other`` event), with one ``ReadState`` carried across calls so a result still learns its tool's name
from a call read on an earlier call. Spans are the log's absolute path and physical line, exactly as
``ouro miner … findings`` over the same file would print them. A file that shrank or was replaced is
read again from its start.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from harness.context import LineContext, ReadState
from harness.detect import Format, classify
from harness.envelope import unwrap
from harness.hooks import hook_events
from harness.streamjson import stream_events
from harness.transcript import transcript_events
from schemas import HarnessEvent, HarnessKind, Span

__all__ = ["SessionLog"]


class SessionLog:
    """The typed events of one session log, read incrementally, addressable by byte offset."""

    def __init__(self, path: Path, run: str) -> None:
        self.path = path
        self.run = run
        self._reset()

    def _reset(self) -> None:
        self.events: list[HarnessEvent] = []
        self._ends: list[int] = []  # byte offset where each line ends
        self._counts: list[int] = []  # events read up to and including each line
        self._state = ReadState()
        self._read_to = 0
        self._inode: tuple[int, int] | None = None

    @property
    def lines(self) -> int:
        """Physical lines read so far."""
        return len(self._ends)

    def advance(self, to: int) -> None:
        """Read the whole lines that end at or before byte ``to``."""
        info = os.stat(self.path)
        if self._inode not in (None, (info.st_dev, info.st_ino)) or info.st_size < self._read_to:
            self._reset()
        self._inode = (info.st_dev, info.st_ino)
        if to <= self._read_to:
            return
        with self.path.open("rb") as handle:
            handle.seek(self._read_to)
            chunk = handle.read(to - self._read_to)
        whole = chunk[: chunk.rfind(b"\n") + 1]
        position = self._read_to
        for raw in whole.splitlines(keepends=True):
            position += len(raw)
            self._read_line(raw, len(self._ends) + 1)
            self._ends.append(position)
            self._counts.append(len(self.events))
        self._read_to = position

    def upto(self, offset: int) -> tuple[list[HarnessEvent], int]:
        """The events of the lines that end at or before ``offset``, and how many lines that is."""
        lines = bisect.bisect_right(self._ends, offset)
        return self.events[: self._counts[lines - 1] if lines else 0], lines

    def _read_line(self, raw: bytes, number: int) -> None:
        if not raw.strip():
            return
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return  # the corpus readers report it; a gate decides on what can be read
        if not isinstance(doc, dict):
            return
        ctx = LineContext(self.run, Span(file=str(self.path), line=number), doc)
        try:
            found = list(_dispatch(doc, ctx, self._state))
        except (ValueError, TypeError, OverflowError):
            return  # a value that cannot be typed: the whole line is left out, as the readers do
        self.events.extend(found)


def _dispatch(doc: dict[str, Any], ctx: LineContext, state: ReadState) -> Iterator[HarnessEvent]:
    """One object's events, by its format (``harness.Reader``'s order)."""
    found = classify(doc)
    if found is Format.ENVELOPE:
        opened = unwrap(doc)
        ctx = LineContext(ctx.run, ctx.span, ctx.raw, opened.ts)
        inner = classify(opened.event)
        if inner is Format.HOOK:
            return hook_events(opened.event, ctx, state)
        if inner is Format.TRANSCRIPT:
            return transcript_events(opened.event, ctx, state)
        return stream_events(opened.event, ctx, state, type_hint=opened.event_type)
    if found is Format.HOOK:
        return hook_events(doc, ctx, state)
    if found is Format.TRANSCRIPT:
        return transcript_events(doc, ctx, state)
    if found is Format.STREAM_JSON:
        return stream_events(doc, ctx, state)
    return iter([ctx.event(HarnessKind.OTHER)])

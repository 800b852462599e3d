"""A session's log, read incrementally: each hook call reads only the lines appended since the last one.

The gate server keeps one ``SessionLog`` per ``<state>/runs/<session>/events.jsonl``. It holds no events:
``advance`` types the new whole lines and hands their events to the caller, a batch at a time (which
keeps what its gates need of them, and drops the rest), and keeps only where each line ends (8 bytes a line)
and the readers' ``ReadState``. ``read_events`` reads a prefix of a log afresh, for a gate that needs the
whole run. Lines are typed by the corpus readers' own per-format functions, in the order
``harness.Reader`` applies them (the CSF envelope opened first, then a hook payload, a transcript
line or a stream-json line; anything else an ``other`` event), with one ``ReadState`` carried across
calls so a result still learns its tool's name from a call read on an earlier call. Spans are the log's
absolute path and physical line, exactly as ``ouro miner … findings`` over the same file would print
them. A file that shrank or was replaced is read again from its start (``generation`` counts those
restarts, so a holder of what was derived from the old lines knows to drop it).
"""

from __future__ import annotations

import bisect
import os
from array import array
from collections.abc import Callable
from pathlib import Path

import orjson

from ouroboros_gates.harness.context import LineContext, ReadState
from ouroboros_gates.harness.line import Where
from ouroboros_gates.harness.reader import line_events
from ouroboros_gates.schemas import HarnessEvent, Span

__all__ = ["Line", "SessionLog", "read_events"]

Line = tuple[int, HarnessEvent]
"""An event and the physical line it was read from."""

BATCH = 1024
"""Events handed over at a time while a log is read."""


class _LineReader:
    """Types the lines of one log in order, carrying the readers' state from line to line."""

    def __init__(self, path: Path, run: str) -> None:
        self.path, self.run, self.state = path, run, ReadState()

    def read(self, raw: bytes, number: int) -> list[HarnessEvent]:
        if not raw.strip():
            return []
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return []  # the corpus readers report it; a gate decides on what can be read
        if not isinstance(doc, dict):
            return []
        file = str(self.path)
        ctx = LineContext(self.run, Where(file, number), doc)
        try:
            span = Span(file=file, line=number)
            return [event.typed(span) for event in line_events(doc, ctx, self.state)]
        except (ValueError, TypeError, OverflowError):
            return []  # a value that cannot be typed: the whole line is left out, as the readers do


class SessionLog:
    """Where the lines of one session log end, read incrementally, with the events of each new line."""

    def __init__(self, path: Path, run: str) -> None:
        self.path = path
        self.run = run
        self.generation = 0
        self._reset()

    def _reset(self) -> None:
        self._ends = array("q")  # byte offset where each line ends
        self._reader = _LineReader(self.path, self.run)
        self._read_to = 0
        self._inode: tuple[int, int] | None = None
        self.generation += 1

    @property
    def lines(self) -> int:
        """Physical lines read so far."""
        return len(self._ends)

    @property
    def read_to(self) -> int:
        """The byte offset up to which the log has been read."""
        return self._read_to

    def advance(self, to: int, sink: Callable[[list[Line]], None]) -> None:
        """Read the whole lines that end at or before byte ``to``, handing their events to ``sink`` a batch
        of lines at a time (so reading a long log at once never holds all of its events)."""
        info = os.stat(self.path)
        if self._inode not in (None, (info.st_dev, info.st_ino)) or info.st_size < self._read_to:
            self._reset()
        self._inode = (info.st_dev, info.st_ino)
        if to <= self._read_to:
            return
        with self.path.open("rb") as handle:
            handle.seek(self._read_to)
            chunk = handle.read(to - self._read_to)
        found: list[Line] = []
        position = self._read_to
        for raw in chunk[: chunk.rfind(b"\n") + 1].splitlines(keepends=True):
            position += len(raw)
            number = len(self._ends) + 1
            found += [(number, event) for event in self._reader.read(raw, number)]
            self._ends.append(position)
            self._read_to = position
            if len(found) >= BATCH:
                sink(found)
                found = []
        sink(found)

    def end_of(self, line: int) -> int:
        """The byte offset where line ``line`` ends (0 for line 0: the start of the log)."""
        return self._ends[line - 1] if line > 0 else 0

    def line_at(self, offset: int) -> int:
        """How many of the lines read end at or before byte ``offset``."""
        return bisect.bisect_right(self._ends, offset)


def read_events(path: Path, run: str, to: int) -> list[HarnessEvent]:
    """The events of the whole lines of ``path`` that end at or before byte ``to``, read afresh."""
    with path.open("rb") as handle:
        chunk = handle.read(to)
    reader = _LineReader(path, run)
    lines = chunk[: chunk.rfind(b"\n") + 1].splitlines(keepends=True)
    return [event for number, raw in enumerate(lines, start=1) for event in reader.read(raw, number)]

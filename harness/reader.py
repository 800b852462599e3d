"""The reader: lazy, typed harness events of one run, whatever formats its files and lines are in.

Each JSON object is classified on its own (``detect.classify``) and handed to its format's reader, so a
file that mixes formats, or interleaves sessions, is read right. Malformed lines are collected with
their file:line and counted; they never stop the reader.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ouroboros_gates.harness.context import LineContext, ReadState
from ouroboros_gates.harness.detect import EXPECTED, Format, classify
from ouroboros_gates.harness.envelope import unwrap
from ouroboros_gates.harness.hooks import hook_events
from ouroboros_gates.harness.line import LineEvent, Where, valid_run_id
from ouroboros_gates.harness.openhands import openhands_events
from ouroboros_gates.harness.paths import expand, own_agents, run_at
from ouroboros_gates.harness.peek import unknown_keys
from ouroboros_gates.harness.source import Malformed, Source
from ouroboros_gates.harness.streamjson import stream_events
from ouroboros_gates.harness.swe_agent import swe_agent_events
from ouroboros_gates.harness.transcript import transcript_events
from ouroboros_gates.schemas.errors import CorpusError
from ouroboros_gates.schemas.kinds import HarnessKind

if TYPE_CHECKING:
    from ouroboros_gates.schemas import HarnessEvent, Span

__all__ = ["EXPECTED", "Reader", "Unread", "iter_events", "line_events", "read", "unread_files"]


@dataclass(frozen=True)
class Unread:
    """A file the readers could not read: none of its objects is in a known format, or it could not be
    opened (``error``)."""

    file: str
    keys: list[str]
    """The first object's keys (up to 12): what the file held instead."""
    error: str | None = None
    """Why the file could not be opened (``cannot read: Permission denied``), when that was the trouble."""

    def __str__(self) -> str:
        if self.error is not None:
            return f"{self.file}: not read: {self.error}"
        held = ", ".join(self.keys) or "no keys"
        return (
            f"{self.file}: not read: no object in a known format (its first has {held}); expected {EXPECTED}"
        )


def unread_files(files: Iterable[Path]) -> list[Unread]:
    """The files among ``files`` that cannot be opened, or whose first objects are all of no known format:
    what ``Reader.unread`` names after a whole pass, judged from the first objects alone (``ouro ingest``,
    which leaves the reading to the workers). A file that no longer exists is not among them (a vanished
    file is a skip, not an error)."""
    return [unread for path in files if (unread := _unread(path)) is not None]


def _unread(path: Path) -> Unread | None:
    """Why the file cannot be read, judged from its first objects; None when it can, or is gone."""
    try:
        keys = unknown_keys(path)
    except CorpusError as exc:  # could not be opened
        return Unread(str(path), [], _open_error(exc)) if path.exists() else None
    return Unread(str(path), keys) if keys is not None else None


def _open_error(exc: CorpusError) -> str:
    """``cannot read: <why>`` from the error ``Source`` raises when it cannot open a file."""
    cause = exc.__cause__
    why = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(exc)
    return f"cannot read: {why}"


class Reader:
    """Reads one run's files lazily into ``HarnessEvent``s (or, with ``plain``, the readers' own
    ``LineEvent``s, which need no model), counting lines and collecting malformed ones.

    ``lines``, ``malformed`` and ``formats`` describe the last (or current) pass; iterating again
    starts over.
    """

    def __init__(self, files: Sequence[Path], run: str, notes: Sequence[str] = ()) -> None:
        if not valid_run_id(run):  # checked once here, not as a failure on every line
            raise CorpusError(f"run {run!r} is not a valid run id (letters, digits, _ . : -)")
        self.run = run
        self.files = tuple(files)
        self.own_agents = own_agents(self.files)
        self.notes = tuple(notes)
        self.formats: Counter[Format] = Counter()
        self._sources: list[Source] = []
        self._by_file: dict[str, Counter[Format]] = {}
        self._first_keys: dict[str, list[str]] = {}
        self._state = ReadState(own_agents=self.own_agents)
        self._vanished: list[str] = []
        self._not_opened: list[Unread] = []

    @property
    def lines(self) -> int:
        """Physical lines read, blank and malformed ones included."""
        return sum(source.lines for source in self._sources)

    @property
    def malformed(self) -> list[Malformed]:
        """The lines that could not be read, with file:line and why, in reading order (``MAX_REPORTED``
        per file at most: ``malformed_count`` counts them all)."""
        return [bad for source in self._sources for bad in source.malformed]

    @property
    def malformed_count(self) -> int:
        """How many lines could not be read."""
        return sum(source.malformed_count for source in self._sources)

    @property
    def unread(self) -> list[Unread]:
        """The files of the last pass that held JSON but nothing in a format the readers know, with what
        they held and what was expected: nothing of them was counted."""
        unknown = [
            Unread(name, self._first_keys.get(name, []))
            for name, found in self._by_file.items()
            if found and set(found) == {Format.UNKNOWN}
        ]
        return [*unknown, *self._not_opened]

    @property
    def pending(self) -> list[str]:
        """The last lines of the last pass still being written (no newline yet, not JSON yet), as notes:
        left for the next read, not counted as lines nor as malformed."""
        return [
            f"{source.pending.file}:{source.pending.line}: last line not finished (no newline at the end, "
            "not JSON yet): left for the next read"
            for source in self._sources
            if source.pending is not None
        ]

    @property
    def vanished(self) -> list[str]:
        """The files of the last pass that were gone when they were to be read (deleted since they were
        listed): skipped, and named here."""
        return list(self._vanished)

    @property
    def cut(self) -> list[str]:
        """The stream-json turns of the last pass that have no ``result`` line, as notes."""
        return [
            f"{where.file}:{where.line}: session {session or '(none)'} ends without a result line "
            "(a process killed or still running): its last turn's usage and cost are not counted "
            "(assistant lines carry partial snapshots)"
            for (_file, session), where in self._state.open_turns.items()
        ]

    def repeats(self, event: HarnessEvent | LineEvent) -> bool:
        """Whether ``event`` relays a subagent's line that this run also reads from the subagent's own
        transcript: counting it, or mining it, would count that work twice."""
        return event.relay and event.agent in self.own_agents

    def __iter__(self) -> Iterator[HarnessEvent]:
        from ouroboros_gates.schemas import (
            Span,  # the contract's models load with the first typed read, not with the reader
        )

        for source, line, events in self._lines():
            span = Span(file=source.name, line=line)
            try:
                # A whole line's events or none: a value that cannot be typed marks the line malformed.
                typed = _typed(events, span)
            except ValueError as exc:  # pydantic's ValidationError is one
                source.report(line, f"could not be typed: {_first_line(exc)}")
                continue
            yield from typed

    def plain(self) -> Iterator[LineEvent]:
        """The events as the format readers make them, not validated against the contract's models (their
        conversions type every field already): what counting a run needs, with no model loaded."""
        for _source, _line, events in self._lines():
            yield from events

    def _lines(self) -> Iterator[tuple[Source, int, list[LineEvent]]]:
        self._sources, self.formats, self._by_file, self._first_keys = [], Counter(), {}, {}
        self._vanished, self._not_opened = [], []
        self._state = state = ReadState(own_agents=self.own_agents)
        for path in self.files:
            source = Source(path)
            self._sources.append(source)
            self._by_file[source.name] = Counter()
            for line, doc in self._objects(source):
                try:
                    events = list(
                        self._dispatch(doc, LineContext(self.run, Where(source.name, line), doc), state)
                    )
                except (ValueError, TypeError, OverflowError) as exc:
                    source.report(line, f"could not be typed: {_first_line(exc)}")
                    continue
                yield source, line, events

    def _objects(self, source: Source) -> Iterator[tuple[int, dict[str, Any]]]:
        """The source's objects; a file that cannot be opened is named (``vanished`` when it is gone,
        ``unread`` otherwise) and the next file is read."""
        objects = iter(source)
        while True:
            try:
                found = next(objects)
            except StopIteration:
                return
            except CorpusError as exc:  # ``Source`` raises it only when the file cannot be opened
                self._could_not_open(source, exc)
                return
            yield found

    def _could_not_open(self, source: Source, exc: CorpusError) -> None:
        """Name a file that could not be opened: ``vanished`` when it is gone, ``unread`` otherwise."""
        if isinstance(exc.__cause__, FileNotFoundError):
            self._vanished.append(source.name)
        else:
            self._not_opened.append(Unread(source.name, [], _open_error(exc)))

    def _dispatch(self, doc: dict[str, Any], ctx: LineContext, state: ReadState) -> Iterator[LineEvent]:
        found = classify(doc)
        self.formats[found] += 1
        self._by_file[ctx.span.file][found] += 1
        self._first_keys.setdefault(ctx.span.file, sorted(doc)[:12])
        return line_events(doc, ctx, state, found)


def _typed(events: list[LineEvent], span: Span) -> list[HarnessEvent]:
    """A line's events as the contract's; a trajectory's steps carry their own lines: only the line's own
    events share its ``span``."""
    return [event.typed(span if event.span.line == span.line else None) for event in events]


def line_events(
    doc: dict[str, Any], ctx: LineContext, state: ReadState, found: Format | None = None
) -> Iterator[LineEvent]:
    """The events of one JSON object, by its format (``found``, when classified already): a CSF envelope
    is opened and its ``event`` read by its own format's reader; an object of no known format is one
    ``other`` event. The readers and the gate server's incremental session logs type every line through
    here."""
    found = classify(doc) if found is None else found
    reader = _READERS.get(found) if found is not None else None
    return iter((ctx.event(HarnessKind.OTHER),)) if reader is None else reader(doc, ctx, state)


def _envelope_events(doc: dict[str, Any], ctx: LineContext, state: ReadState) -> Iterator[LineEvent]:
    opened = unwrap(doc)
    ctx = LineContext(ctx.run, ctx.span, ctx.raw, opened.ts)
    inner = classify(opened.event)
    if inner is Format.HOOK:
        return hook_events(opened.event, ctx, state)
    if inner is Format.TRANSCRIPT:
        return transcript_events(opened.event, ctx, state)
    # the harness wraps stream-json lines; event_type names a line that lacks its type
    return stream_events(opened.event, ctx, state, type_hint=opened.event_type)


def _openhands_line(doc: dict[str, Any], ctx: LineContext, state: ReadState) -> Iterator[LineEvent]:
    history = doc.get("history")
    if not isinstance(history, list):
        return openhands_events(doc, ctx, state)
    # an evaluation's line: the conversation's events, on this line
    return (
        event for item in history if isinstance(item, dict) for event in openhands_events(item, ctx, state)
    )


_READERS: dict[Format, Callable[[dict[str, Any], LineContext, ReadState], Iterator[LineEvent]]] = {
    Format.ENVELOPE: _envelope_events,
    Format.HOOK: hook_events,
    Format.TRANSCRIPT: transcript_events,
    Format.STREAM_JSON: stream_events,
    Format.SWE_AGENT: swe_agent_events,
    Format.OPENHANDS: _openhands_line,
}
"""The reader of each format's objects."""


def read(path: Path | str, run: str | None = None) -> Reader:
    """A lazy reader over one run (``paths.run_at``): a harness log file of any format, a Claude Code session
    (its transcript or its folder, with its subagents), or a run directory."""
    found = run_at(Path(path))
    return Reader(found.files, run or found.name, found.notes)


def iter_events(
    items: Iterable[str | Path], on_malformed: Callable[[Malformed], None] | None = None
) -> Iterator[HarnessEvent]:
    """Every event of every run named by files, run directories, directories of runs or globs.

    Malformed lines go to ``on_malformed`` (after each run) when given; they never stop the iteration.
    """
    for run in expand(items):
        reader = Reader(run.files, run.name, run.notes)
        yield from reader
        if on_malformed is not None:
            for bad in reader.malformed:
                on_malformed(bad)


def _first_line(exc: Exception) -> str:
    listed = getattr(exc, "errors", None)  # pydantic's ValidationError lists what it refused
    errors = listed() if callable(listed) else None
    if errors:
        first = errors[0]
        return f"{'.'.join(str(part) for part in first['loc'])}: {first['msg']}"[:200]
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]

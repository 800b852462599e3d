"""Corpus items: what one call of a miner's ``extract`` reads.

A ``jsonl`` item is one harness run: its instance id is the run id (the run directory's name, or a Claude
Code session's ``sessionId``), and ``events()`` reads it lazily into ``HarnessEvent``s through the corpus
readers (``harness``), so an extractor that has seen enough can stop reading. A session is read with
its subagents' transcripts; a relayed line that a subagent's own transcript repeats is left out, so an
extractor sees each call once, with the ``agent`` that made it. Malformed lines never stop a reader; they are
kept on the item (``malformed``) after a pass and the verbs report them with file:line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ouroboros_gates.harness import Malformed, Reader, Unread, expand, run_at, run_name
from ouroboros_gates.schemas import HarnessEvent

__all__ = ["JSONL", "READ_ONCE_BYTES", "CorpusItem", "EventsItem", "corpus_items", "fixture_items"]

READ_ONCE_BYTES = 256 * 1024 * 1024
"""Up to this size a run several miners read is read once and held (a larger one is streamed to each)."""

JSONL = "jsonl"
"""The corpus kind of harness runs (``<state>/<run>/events.jsonl``)."""


@dataclass(eq=False)
class CorpusItem:
    """One corpus item: its kind, its instance id, where it lies, and its events read lazily."""

    kind: str
    instance: str
    path: Path
    files: tuple[Path, ...]
    notes: tuple[str, ...] = ()
    _reader: Reader | None = field(default=None, repr=False)

    def events(self) -> Iterator[HarnessEvent]:
        """The item's events, in file order, read lazily (each call reads the files again), without the
        relays a subagent's own transcript repeats."""
        reader = self._reader = Reader(self.files, self.instance, self.notes)
        return (event for event in reader if not reader.repeats(event))

    @property
    def malformed(self) -> list[Malformed]:
        """The lines the last pass of ``events()`` could not read, with file:line and why."""
        return [] if self._reader is None else self._reader.malformed

    @property
    def unread(self) -> list[Unread]:
        """The files of the last pass that held nothing in a known format."""
        return [] if self._reader is None else self._reader.unread

    def read_once(self) -> CorpusItem:
        """This item with its events read now, for several miners to share (one pass over the files, not
        one per miner); itself when its files are larger than ``READ_ONCE_BYTES``."""
        if sum(path.stat().st_size for path in self.files) > READ_ONCE_BYTES:
            return self
        events = list(self.events())
        item = EventsItem(
            self.kind, self.instance, self.path, self.files, events, tuple(self.malformed), self.notes
        )
        item._unread = tuple(self.unread)
        return item

    @property
    def file_names(self) -> tuple[str, ...]:
        """The file names the readers put in the spans of this item's events."""
        return tuple(str(path) for path in self.files)


class EventsItem(CorpusItem):
    """A corpus item whose events are already read: every pass gives them again, reading nothing."""

    def __init__(
        self,
        kind: str,
        instance: str,
        path: Path,
        files: tuple[Path, ...],
        events: list[HarnessEvent],
        malformed: tuple[Malformed, ...] = (),
        notes: tuple[str, ...] = (),
    ) -> None:
        super().__init__(kind, instance, path, files, notes)
        self._events, self._malformed = events, malformed
        self._unread: tuple[Unread, ...] = ()

    def events(self) -> Iterator[HarnessEvent]:
        """The events given, every time."""
        return iter(self._events)

    @property
    def malformed(self) -> list[Malformed]:
        """The lines the one pass could not read."""
        return list(self._malformed)

    @property
    def unread(self) -> list[Unread]:
        """The files the one pass could not read at all."""
        return list(self._unread)


def corpus_items(patterns: Iterable[str | Path]) -> list[CorpusItem]:
    """The harness runs named by files, run directories, directories of runs or quoted globs, in
    order, each once. Raises ``CorpusError`` for a name that matches nothing."""
    return [CorpusItem(JSONL, run.name, run.path, run.files, run.notes) for run in expand(patterns)]


def fixture_items(folder: Path) -> list[CorpusItem]:
    """A miner's fixture runs: each folder in ``folder`` that holds a harness log, named by the folder (as
    ``labels.tsv`` names it) whatever its log is: ``events.jsonl``, or a log file as it was captured (a Claude
    Code transcript, JSON lines or a JSON array, a session with its subagents, another agent's trajectory)."""
    items = []
    for place in _subfolders(folder):
        if any(place.iterdir()):
            found = run_at(place)
            items.append(CorpusItem(JSONL, run_name(place), place, found.files, found.notes))
    return items


def _subfolders(folder: Path) -> list[Path]:
    """The folders in ``folder``, sorted; none when it is no folder."""
    return sorted(path for path in folder.iterdir() if path.is_dir()) if folder.is_dir() else []

"""The JSON objects of one file, read lazily, with the line each starts on.

Two layouts, chosen per file by looking at its first lines (never by a flag):

- **JSON lines** (``.jsonl``/``.ndjson``, the CSF envelope, stream-json, transcripts, hook logs): one value
  per line. A line holding a JSON array yields each of its objects (hook loggers write arrays).
- **a JSON document** (a captured hook payload, pretty-printed; a pretty-printed array of payloads;
  several pretty-printed objects one after another): chosen only when the first line is not JSON on its
  own and the first value, scanned from there, is valid JSON spread over several lines.

Either way the file is read one line at a time (a 2 GB file streams, a 10 MB line is one read), and bad
input never stops the reader: a line that is not JSON, not an object, or not UTF-8 is reported as
``Malformed`` with its file:line and the rest of the file is still read. A last line of JSON lines that is
not JSON and has no newline at its end is a line still being written (a session in progress, a process
killed mid-write): it is ``pending``, neither read nor malformed nor counted, and read whole once the writer
finishes it.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

import orjson

from ouroboros_gates.harness.line import Where
from ouroboros_gates.schemas.errors import CorpusError

__all__ = ["Layout", "Malformed", "Source"]

# A value larger than this in a JSON document is reported, not buffered: a document whose first object
# never closes must not pull a whole multi-gigabyte file into memory.
MAX_VALUE_BYTES = 256 << 20
# How far the layout probe may scan for the end of a first multi-line value before deciding "lines".
PROBE_BYTES = 64 << 20
# Every malformed line is counted; the first this many of a file are kept with their reason, so a huge
# file of garbage cannot fill memory with reports.
MAX_REPORTED = 10_000

_BOM = b"\xef\xbb\xbf"
_IN_STRING = re.compile(rb'["\\]')
_STRUCTURE = re.compile(rb'[{}\[\]"]')
_TOKEN = re.compile(rb'[{}\[\]",]|[^\s{}\[\]",]+')


class Layout(StrEnum):
    """How a file holds its JSON values."""

    LINES = "lines"
    DOCUMENT = "document"


@dataclass(frozen=True)
class Malformed:
    """A line that could not be read, with where and why."""

    span: Where
    reason: str

    def __str__(self) -> str:
        return f"{self.span.file}:{self.span.line}: {self.reason}"


class Source:
    """Iterates ``(line, object)`` over one file, counting lines and collecting what it had to skip.

    Iterating again starts over (the counters are reset), so a source can be summarised twice.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = str(path)
        self.lines = 0
        self.layout: Layout | None = None
        self.malformed: list[Malformed] = []
        self.malformed_count = 0
        self.pending: Where | None = None
        """A last line of JSON lines that is not JSON and has no newline yet (a run still being written):
        neither read nor malformed, nor counted in ``lines``; read once it is finished."""

    def __iter__(self) -> Generator[tuple[int, dict[str, Any]], None, None]:
        self.lines, self.malformed, self.malformed_count, self.pending = 0, [], 0, None
        with self._open() as handle:
            self.layout = _layout(handle)
            if self.layout is Layout.DOCUMENT:
                yield from self._document(handle)
            else:
                yield from self._lines(handle)

    def _open(self) -> IO[bytes]:
        try:
            return self.path.open("rb")
        except OSError as exc:
            raise CorpusError(f"{self.path}: cannot read: {exc.strerror}") from exc

    def report(self, line: int, reason: str) -> None:
        """Record that ``line`` could not be read, and why."""
        self.malformed_count += 1
        if len(self.malformed) < MAX_REPORTED:
            self.malformed.append(Malformed(Where(self.name, line), reason))

    def _lines(self, handle: IO[bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
        for number, raw in enumerate(handle, start=1):
            self.lines = number
            data = raw[3:] if number == 1 and raw.startswith(_BOM) else raw
            try:
                value = orjson.loads(data)
            except orjson.JSONDecodeError:
                self._not_json(number, raw, data)
                continue
            if type(value) is dict:  # nearly every line: one object
                yield number, value
            else:
                yield from self._objects(number, value)

    def _not_json(self, number: int, raw: bytes, data: bytes) -> None:
        """Take a line that is not JSON: a blank line is skipped, an unfinished last line left pending,
        any other reported with why."""
        if not data.strip():
            return
        if not raw.endswith(b"\n"):  # the writer is still on it: the next read takes it whole
            self.lines, self.pending = number - 1, Where(self.name, number)
            return
        self.report(number, str(_decode(data)[1]))

    def _document(self, handle: IO[bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
        scanner = _Scanner()
        for number, raw in enumerate(handle, start=1):
            self.lines = number
            for start, blob, problem in scanner.feed(_unmarked(raw, number), number):
                yield from self._scanned(start, blob, problem)
        if scanner.open_since is not None:
            self.report(scanner.open_since, "truncated: the JSON value starting here never closes")

    def _scanned(self, start: int, blob: bytes, problem: str | None) -> Iterator[tuple[int, dict[str, Any]]]:
        """The objects of a value the scanner found starting on line ``start``, or the problem reported."""
        if problem is not None:
            self.report(start, problem)
            return
        value, reason = _decode(blob)
        if reason is not None:
            self.report(start, reason)
        else:
            yield from self._objects(start, value)

    def _objects(self, number: int, value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
        if isinstance(value, dict):
            yield number, value
        elif isinstance(value, list):
            yield from self._items(number, value)
        else:
            self.report(number, f"not a JSON object (a JSON {type(value).__name__})")

    def _items(self, number: int, value: list[Any]) -> Iterator[tuple[int, dict[str, Any]]]:
        """The objects of an array on line ``number``; any other element is reported."""
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield number, item
            else:
                self.report(number, f"array element {index} is not a JSON object")


def _unmarked(raw: bytes, number: int) -> bytes:
    """Line ``number`` without the byte order mark the first line may start with."""
    return raw[3:] if number == 1 and raw.startswith(_BOM) else raw


def _decode(data: bytes) -> tuple[Any, str | None]:
    """The JSON value of ``data``, or why it is not one (non-UTF-8 bytes are named as such)."""
    try:
        return orjson.loads(data), None
    except orjson.JSONDecodeError as exc:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            return None, f"not UTF-8 (byte 0x{data[bad.start]:02x} at column {bad.start + 1})"
        return None, f"not JSON ({exc.msg})"


def _layout(handle: IO[bytes]) -> Layout:
    """The layout of an open file, which is then read again from its start."""
    if not handle.seekable():  # a pipe cannot be read twice: JSON lines, the layout every harness streams
        return Layout.LINES
    layout = _probe(handle)
    handle.seek(0)
    return layout


def _probe(handle: IO[bytes]) -> Layout:
    """JSON lines unless the first line is not JSON and a valid multi-line value starts there."""
    if not _may_open_document(_next_nonblank(handle)):
        return Layout.LINES
    # A JSON-lines file whose first line is bad is recognised by its second line, without a scan.
    if _holds_value(_next_nonblank(handle)):
        return Layout.LINES
    handle.seek(0)
    return _scanned_layout(handle)


def _may_open_document(first: bytes | None) -> bool:
    """Whether a first line is not JSON on its own but opens an object or an array."""
    return first is not None and _decode(first)[1] is not None and first.lstrip()[:1] in (b"{", b"[")


def _holds_value(line: bytes | None) -> bool:
    """Whether a line holds a whole JSON object or array."""
    return line is not None and isinstance(_decode(line)[0], dict | list)


def _scanned_layout(handle: IO[bytes]) -> Layout:
    """The layout the first value scanned from the start of ``handle`` shows (in ``PROBE_BYTES``)."""
    scanner, read = _Scanner(), 0
    for number, raw in enumerate(handle, start=1):
        read += len(raw)
        found = list(scanner.feed(_unmarked(raw, number), number))
        if found:
            return _layout_of(found, number, in_array=scanner.base == 1)
        if read > PROBE_BYTES:
            break
    return Layout.LINES


def _layout_of(found: list[tuple[int, bytes, str | None]], number: int, in_array: bool) -> Layout:
    """The layout the values that end on line ``number`` show, the first value of the file among them.

    The first value must be valid JSON and the rest of its last line clean (a stray byte after it means
    a bad line, not a document); several lines make a document: this value's, or those of the array it
    is an item of.
    """
    start = found[0][0]
    return Layout.DOCUMENT if _all_valid(found) and (number > start or in_array) else Layout.LINES


def _all_valid(found: list[tuple[int, bytes, str | None]]) -> bool:
    """Whether the scanner found no stray text and the first value is valid JSON."""
    return all(problem is None for _, _, problem in found) and _decode(found[0][1])[1] is None


def _next_nonblank(handle: IO[bytes]) -> bytes | None:
    for raw in handle:
        data = raw[3:] if raw.startswith(_BOM) else raw
        if data.strip():
            return data
    return None


class _Scanner:
    """Finds the top-level values of a JSON document fed line by line (the items of a top-level array).

    It tracks only strings and bracket depth, so it never holds more than the value being read.
    """

    def __init__(self) -> None:
        self.depth = 0
        self.base = 0  # 1 inside a top-level array: its items are the values
        self.in_string = False
        self.escaped = False
        self.open_since: int | None = None
        self.parts: list[bytes] = []
        self.size = 0

    def feed(self, line: bytes, number: int) -> Iterator[tuple[int, bytes, str | None]]:
        """``(start line, value bytes, problem)`` for each value or stray text that ends on this line."""
        # A line that goes on after a backslash ending the last one starts past the escaped character.
        pos, cut, self.escaped = int(self.escaped), 0, False
        while pos < len(line):
            if self.in_string:
                pos = self._string(line, pos)
                continue
            if self.depth > self.base:
                hit = _STRUCTURE.search(line, pos)
                if hit is None:
                    break
                pos = hit.end()
                if self._inside(hit[0]):
                    yield from self._close(line, cut, pos)
                continue
            token = _TOKEN.search(line, pos)
            if token is None:
                break
            pos = token.end()
            if not self._between(token[0], number):
                yield (
                    number,
                    b"",
                    f"unexpected {token[0][:20].decode('utf-8', 'replace')!r} between JSON values",
                )
                return
            if self.depth > self.base:
                cut = token.start()  # a value opened here
        if self.open_since is not None:
            self._keep(line[cut:])

    def _string(self, line: bytes, pos: int) -> int:
        """Skip within a string; the position after its closing quote (or the end of the line)."""
        hit = _IN_STRING.search(line, pos)
        if hit is None:
            return len(line)
        if hit[0] == b"\\":
            self.escaped = hit.end() >= len(line)  # the escaped character starts the next line
            return hit.end() + 1
        self.in_string = False
        return hit.end()

    def _between(self, char: bytes, number: int) -> bool:
        """Take a token found between values; False when it cannot stand there."""
        return self._between_items(char, number) if self.base == 1 else self._between_top(char, number)

    def _between_top(self, char: bytes, number: int) -> bool:
        """Between a document's top-level values: a value opens, or a top-level array starts."""
        if char == b"{":
            self._open(number)
        elif char == b"[":
            self.base = self.depth = 1  # a top-level array: its items are the values
        else:
            return False
        return True

    def _between_items(self, char: bytes, number: int) -> bool:
        """Between the items of a top-level array: an item opens, the array ends, or a comma."""
        if char in (b"{", b"["):
            self._open(number)
        elif char == b"]":
            self.base = self.depth = 0
        else:
            return char == b","
        return True

    def _open(self, number: int) -> None:
        """A value opens on line ``number``."""
        self.depth, self.open_since, self.parts, self.size = self.depth + 1, number, [], 0

    def _inside(self, char: bytes) -> bool:
        if char == b'"':
            self.in_string = True
        elif char in (b"{", b"["):
            self.depth += 1
        elif char in (b"}", b"]"):
            self.depth -= 1
            return self.depth == self.base
        return False

    def _keep(self, piece: bytes) -> None:
        self.size += len(piece)
        # Past the limit the value is only measured, so an unclosed value costs no memory.
        if self.size <= MAX_VALUE_BYTES:
            self.parts.append(piece)
        else:
            self.parts.clear()

    def _close(self, line: bytes, cut: int, end: int) -> Iterator[tuple[int, bytes, str | None]]:
        start = self.open_since
        assert start is not None  # a value closes only after it opened
        self._keep(line[cut:end])
        blob, size, self.parts, self.open_since = b"".join(self.parts), self.size, [], None
        if size > MAX_VALUE_BYTES:
            yield start, b"", f"a JSON value of {size} bytes is over the {MAX_VALUE_BYTES}-byte limit"
        else:
            yield start, blob, None

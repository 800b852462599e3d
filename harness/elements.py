"""Where the elements of an array inside a JSON document start: the line of each step of a pretty-printed
trajectory, so each step's events carry their own span (``swe_agent``).

The document is read again with ``json``'s own scanner, once per file version (cached by its modification
time and size); a file that cannot be read again, or holds no such array where it is looked for, gives no
lines, and the caller keeps the document's own.
"""

from __future__ import annotations

import json
import os
import re
from bisect import bisect_right
from functools import lru_cache

__all__ = ["element_lines"]

_SPACE = re.compile(r"\s*")
_NEWLINE = re.compile("\n")
_DECODER = json.JSONDecoder()


def element_lines(file: str, line: int, key: str) -> list[int]:
    """The line each element of the array ``key`` starts on, in the JSON object that starts on ``line`` of
    ``file`` (a pretty-printed trajectory: one line per step; a one-line document: its line for all); empty
    when the file cannot be read again (a pipe) or holds no such array there."""
    try:
        stat = os.stat(file)
    except OSError:
        return []
    return list(_element_lines(file, line, key, stat.st_mtime_ns, stat.st_size))


@lru_cache(maxsize=64)
def _element_lines(file: str, line: int, key: str, _mtime_ns: int, _size: int) -> tuple[int, ...]:
    text = _read_text(file)
    if text is None:
        return ()
    breaks = [match.start() for match in _NEWLINE.finditer(text)]
    try:
        offsets = _array_offsets(text, _line_start(breaks, line), key)
    except (ValueError, IndexError):  # not the shape looked for: no lines, the caller keeps the document's
        return ()
    return tuple(bisect_right(breaks, offset) + 1 for offset in offsets)


def _read_text(file: str) -> str | None:
    """The file's text (undecodable bytes replaced); None when it cannot be read."""
    try:
        with open(file, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _line_start(breaks: list[int], line: int) -> int:
    """The offset line ``line`` starts at, given the offsets of the text's newlines (0 past the last)."""
    starts = [0, *(index + 1 for index in breaks)]
    return starts[line - 1] if 0 < line <= len(starts) else 0


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _array_offsets(text: str, at: int, key: str) -> list[int]:
    """The offsets of the elements of ``key``'s array in the object at ``at`` (``json``'s own scanner)."""
    at = _skip(text, at)
    if text[at] != "{":
        raise ValueError("not an object")
    at = _skip(text, at + 1)
    while text[at] != "}":
        name, at = _DECODER.raw_decode(text, at)
        at = _skip(text, _skip(text, at) + 1)  # past the colon
        if name == key and text[at] == "[":
            return _elements(text, at)
        at = _past_value(text, at)
    return []


def _elements(text: str, at: int) -> list[int]:
    found, at = [], _skip(text, at + 1)
    while text[at] != "]":
        found.append(at)
        at = _past_value(text, at)
    return found


def _past_value(text: str, at: int) -> int:
    """Where the next member or element starts, after the value at ``at`` and its comma."""
    _, at = _DECODER.raw_decode(text, at)
    at = _skip(text, at)
    return _skip(text, at + 1) if text[at] == "," else at

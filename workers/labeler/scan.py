"""Finding the lines that carry a term, in a file read in blocks (never whole) or in lines held in memory.

A file is read ``BLOCK`` bytes at a time; the unfinished last line of a block is carried into the next,
so a term is never split. Each term is found by one byte pair of it (numpy, over two views of the block
as 16-bit words at even and odd offsets), and only the positions that pass are compared with the term's
other bytes; a term that holds a shorter one is found by that one's pair. Each hit line gets a bit per
term it carries. Lines are numbered from 1, as spans are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["BLOCK", "MAX_TERMS", "Hit", "Scan", "scan_bytes", "scan_file", "scan_lines"]

BLOCK = 1024 * 1024
"""Bytes read at a time: the block and the arrays made from it stay in the processor's cache (measured:
1 MB blocks scan a quarter faster than 16 MB ones), and the per-block work is still noise."""

MAX_TERMS = 64
"""A hit line's terms are the bits of one unsigned 64-bit integer."""

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Hit:
    """A line that carries at least one term: its number, byte offset and length, and the terms' indexes."""

    line: int
    offset: int
    length: int
    terms: frozenset[int]


@dataclass(frozen=True, eq=False)
class Scan:
    """One source scanned: how many lines it has, and for each line that carries a term (in line order)
    its number, byte offset, length and term bits."""

    lines: int
    line: Ints
    offset: Ints
    length: Ints
    mask: npt.NDArray[np.uint64]

    def hits(self) -> tuple[Hit, ...]:
        """The hit lines as values (for reading a few, and for tests)."""
        return tuple(
            Hit(int(n), int(o), int(k), frozenset(t for t in range(MAX_TERMS) if int(m) >> t & 1))
            for n, o, k, m in zip(self.line, self.offset, self.length, self.mask, strict=True)
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scan) and self.lines == other.lines and self.hits() == other.hits()

    __hash__ = None  # type: ignore[assignment]


def _empty(lines: int = 0) -> Scan:
    none = np.zeros(0, np.int64)
    return Scan(lines, none, none, none, np.zeros(0, np.uint64))


_COMPARED_PAIRS = 12
"""Up to this many distinct anchor byte pairs are found by comparing (vectorised, cheap per pair); more
by one lookup in a table of all 65,536 pairs (a gather, dearer than about twelve compares)."""


def _anchors(forms: Sequence[tuple[bytes, int]]) -> list[tuple[bytes, int, int, int]]:
    """``(form, term index, offset, pair)``: the byte pair each form is found by, at ``offset`` in it. A form
    that holds a shorter one (``pkill -f`` holds ``-f``) is found by that one's pair, so only the pairs of
    the forms that hold no other are searched for."""
    offsets: dict[bytes, int] = {}
    for form in sorted({form for form, _ in forms}, key=lambda f: (len(f), f)):
        inner = [(len(other), form.find(other), other) for other in offsets if other in form]
        offsets[form] = min(inner)[1] + offsets[min(inner)[2]] if inner else 0
    return [(form, index, offsets[form], form[offsets[form]] | form[offsets[form] + 1] << 8) for form, index in forms]


def _positions(block: bytes | memoryview, values: Sequence[int]) -> tuple[Ints, npt.NDArray[np.uint16]]:
    """Positions of the byte pairs ``values`` and the pair at each (two views: even and odd offsets)."""
    n = len(block)
    even = np.frombuffer(block, "<u2", count=n // 2)
    odd = np.frombuffer(block, "<u2", offset=1, count=(n - 1) // 2)
    if len(values) <= _COMPARED_PAIRS:
        at_even, at_odd = even == values[0], odd == values[0]
        for value in values[1:]:
            at_even |= even == value
            at_odd |= odd == value
    else:
        table = np.zeros(65536, np.bool_)
        table[list(values)] = True
        at_even, at_odd = table[even], table[odd]
    hit_even, hit_odd = np.flatnonzero(at_even), np.flatnonzero(at_odd)
    positions = np.concatenate((hit_even * 2, hit_odd * 2 + 1)).astype(np.int64)
    return positions, np.concatenate((even[hit_even], odd[hit_odd]))


def scan_bytes(
    block: bytes | memoryview, forms: Sequence[tuple[bytes, int]], first_line: int = 1, base: int = 0
) -> Scan:
    """Scan ``block`` (whole lines; the last may lack its newline) for the ``(form, term index)`` pairs."""
    n = len(block)
    if n == 0:
        return _empty()
    a = np.frombuffer(block, np.uint8)
    newlines = np.flatnonzero(a == 10)
    count = len(newlines) + (0 if a[-1] == 10 else 1)
    mask = np.zeros(count, np.uint64)
    anchors = _anchors([(form, index) for form, index in forms if 2 <= len(form) <= n and index < MAX_TERMS])
    if anchors:
        positions, pairs = _positions(block, sorted({pair for *_, pair in anchors}))
        for form, index, offset, pair in anchors:
            found = positions[pairs == pair] - offset
            found = found[(found >= 0) & (found <= n - len(form))]
            for k in range(len(form)):
                if k not in (offset, offset + 1):
                    found = found[a[found + k] == form[k]]
            if len(found):
                mask[np.searchsorted(newlines, found)] |= np.uint64(1 << index)
    hit = np.flatnonzero(mask)
    starts = np.concatenate((np.zeros(1, np.int64), newlines.astype(np.int64) + 1))[:count]
    ends = newlines.astype(np.int64) if count == len(newlines) else np.append(newlines, n).astype(np.int64)
    return Scan(count, hit + first_line, starts[hit] + base, ends[hit] - starts[hit], mask[hit])


def _joined(parts: list[Scan], lines: int) -> Scan:
    if not parts:
        return _empty(lines)
    return Scan(
        lines,
        np.concatenate([p.line for p in parts]),
        np.concatenate([p.offset for p in parts]),
        np.concatenate([p.length for p in parts]),
        np.concatenate([p.mask for p in parts]),
    )


def scan_file(path: Path, forms: Sequence[tuple[bytes, int]], block: int = BLOCK) -> Scan:
    """Scan ``path`` for the ``(form, term index)`` pairs, ``block`` bytes at a time. The whole lines of a
    block are scanned in place; only the line that spans two blocks is copied."""
    parts: list[Scan] = []
    lines, base = 0, 0

    def scan(part: bytes | memoryview) -> None:
        nonlocal lines, base
        found = scan_bytes(part, forms, lines + 1, base)
        parts.append(found)
        lines += found.lines
        base += len(part)

    carry = b""
    with path.open("rb") as handle:
        while data := handle.read(block):
            first = data.find(b"\n")
            if first == -1:  # no line ends in this block yet: read on
                carry += data
                continue
            start = 0
            if carry:
                scan(carry + data[: first + 1])
                start = first + 1
            last = data.rfind(b"\n") + 1
            if last > start:
                scan(memoryview(data)[start:last])
            carry = data[last:]
    if carry:
        scan(carry)
    return _joined(parts, lines)


def scan_lines(lines: Sequence[str], forms: Sequence[tuple[bytes, int]]) -> Scan:
    """Scan lines held in memory (a ticket or a pull request); offsets are line indexes."""
    if not lines:
        return _empty()
    found = scan_bytes("\n".join(lines).encode(), forms)
    return Scan(len(lines), found.line, found.line - 1, found.length, found.mask)

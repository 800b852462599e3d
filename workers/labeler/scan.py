"""Finding the lines that carry a term, in a file read in blocks (never whole) or in lines held in memory.

A file is read ``BLOCK`` bytes at a time; the unfinished last line of a block is carried into the next,
so a term is never split. Each term is found by one byte pair of it (numpy compares over two aligned
copies of the block read as 16-bit words, one of them a byte on), as few pairs as find every term; the
positions that pass are checked against the whole term eight bytes at a time. Each hit line gets a bit
per term it carries. Lines are numbered from 1, as spans are. The working arrays are kept per thread from
block to block: a fresh megabyte cost more in page faults than the compares made in it."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["BLOCK", "MAX_TERMS", "Hit", "Scan", "scan_bytes", "scan_file", "scan_lines"]

BLOCK = 2 * 1024 * 1024
"""Bytes read at a time (measured on 200 MB: 2 MB blocks scan as fast as 4 MB ones alone and fastest in two
threads; below 512 KB the per-block work shows)."""

MAX_TERMS = 64
"""A hit line's terms are the bits of one unsigned 64-bit integer."""

Ints = npt.NDArray[np.int64]
Words = npt.NDArray[np.uint64]


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

_WORD = 8
"""A candidate is checked eight bytes at a time: one gather of the 64-bit word starting at each candidate
(from a view with a word at every byte offset) and one compare, instead of one gather per byte."""

Anchored = tuple[bytes, int, int]
"""A form, its term's index, and the offset in it of the byte pair it is found by."""


@dataclass(frozen=True)
class _Plan:
    """The byte pairs searched for, and for each the forms it finds."""

    values: tuple[int, ...]
    groups: tuple[tuple[int, tuple[Anchored, ...]], ...]


def _pair(form: bytes, offset: int) -> int:
    return form[offset] | form[offset + 1] << 8


def _pairs_in(form: bytes) -> dict[int, int]:
    """Each byte pair of ``form`` and its first offset."""
    found: dict[int, int] = {}
    for offset in range(len(form) - 1):
        found.setdefault(_pair(form, offset), offset)
    return found


def _roots(distinct: list[bytes]) -> list[bytes]:
    """The forms that hold no other form."""
    return [form for form in distinct if not any(other != form and other in form for other in distinct)]


def _root_offsets(roots: list[bytes]) -> dict[bytes, int]:
    """The offset of the pair each root is found by, chosen greedily: the pair in the most roots still
    unplaced; among those, the earliest in the first of them."""
    pairs = {root: _pairs_in(root) for root in roots}
    offsets: dict[bytes, int] = {}
    unplaced = list(roots)
    while unplaced:
        value = _best_pair(pairs, unplaced)
        for root in [r for r in unplaced if value in pairs[r]]:
            offsets[root] = pairs[root][value]
            unplaced.remove(root)
    return offsets


def _best_pair(pairs: dict[bytes, dict[int, int]], unplaced: list[bytes]) -> int:
    """The pair of the first unplaced root that is in the most unplaced roots; the earliest in it on a tie."""
    first = pairs[unplaced[0]]
    return max(first, key=lambda v: (sum(v in pairs[r] for r in unplaced), -first[v]))


def _holder_offset(form: bytes, roots: list[bytes], offsets: dict[bytes, int]) -> int:
    """A form that holds a root is found where the shortest (then first) root it holds is."""
    _, at, root = min((len(r), form.find(r), r) for r in roots if r in form)
    return at + offsets[root]


@lru_cache(maxsize=64)
def _plan(forms: tuple[tuple[bytes, int], ...]) -> _Plan:
    """Which pair finds each form. Each pair searched for costs a pass over the block, so as few as find
    every form: a form that holds another (``pkill -f`` holds ``-f``) is found by that one's pair, and the
    rest share pairs where they can (``pattern_kill`` and ``killed_self`` both by ``ki``), chosen greedily
    (the pair in the most forms still unplaced; among those, the earliest in the first of them)."""
    usable = [(form, index) for form, index in forms if len(form) >= 2 and index < MAX_TERMS]
    distinct = sorted({form for form, _ in usable}, key=lambda f: (len(f), f))
    return _grouped(usable, _form_offsets(distinct))


def _form_offsets(distinct: list[bytes]) -> dict[bytes, int]:
    """The offset of the pair each form is found by: a root's chosen greedily, a holder's from its root."""
    roots = _roots(distinct)
    offsets = _root_offsets(roots)
    for form in distinct:
        if form not in offsets:
            offsets[form] = _holder_offset(form, roots, offsets)
    return offsets


def _grouped(usable: list[tuple[bytes, int]], offsets: dict[bytes, int]) -> _Plan:
    """The plan: the forms grouped by the pair they are found by, the pairs in ascending order."""
    groups: dict[int, list[Anchored]] = {}
    for form, index in usable:
        groups.setdefault(_pair(form, offsets[form]), []).append((form, index, offsets[form]))
    return _Plan(
        tuple(sorted(groups)), tuple((value, tuple(group)) for value, group in sorted(groups.items()))
    )


class _Scratch(threading.local):
    """Each thread's working arrays, kept from block to block: fresh ones of a megabyte each cost more in
    page faults than the compares made in them."""

    size = 0

    def arrays(self, size: int) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
        """Two byte arrays of ``size`` and a flag array of one and a half times ``size``, grown when too
        small."""
        if size > self.size:
            self.size = size
            self.here, self.on = np.empty(size, np.uint8), np.empty(size, np.uint8)
            self.flags = np.empty(size + size // 2, np.bool_)
        return self.here[:size], self.on[:size], self.flags[: size + size // 2]


_scratch = _Scratch()


_PAD = _WORD + 16
"""Room a block needs after its last byte: at least 8 bytes of zeros, up to a multiple of 16."""


def _padded(n: int) -> int:
    return (n + _WORD + 15) // 16 * 16


def _aligned(
    here: npt.NDArray[np.uint8], n: int
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8], Words]:
    """The block (``here[:n]``, aligned) zero-padded to a multiple of 16 bytes with at least 8 of padding,
    an aligned copy of it one byte on (a compare over an unaligned view runs at a third of the speed), and
    the 64-bit word at every byte offset. A pair found in the padding would start a form that ends outside
    the block, and is dropped."""
    size = _padded(n)
    here = here[:size]
    here[n:] = 0
    _, on, _ = _scratch.arrays(size)
    on[: n - 1], on[n - 1 :] = here[1:n], 0
    return here, on, np.ndarray((n + 1,), "<u8", here, strides=(1,))


def _nonzero(flags: npt.NDArray[np.bool_]) -> Ints:
    """``np.flatnonzero`` for a sparse array whose length is a multiple of 8: the nonzero 64-bit words first,
    then the flags within them (twice as fast when few are set)."""
    words = flags.view(np.uint64)
    nonzero = np.flatnonzero(words != 0)
    within = np.flatnonzero(words[nonzero].view(np.bool_))
    found: Ints = nonzero[within >> 3] * 8 + (within & 7)
    return found


def _positions(
    here: npt.NDArray[np.uint8], on: npt.NDArray[np.uint8], values: Sequence[int]
) -> tuple[Ints, npt.NDArray[np.uint16]]:
    """Positions of the byte pairs ``values`` and the pair at each."""
    even, odd = here.view("<u2"), on.view("<u2")
    if len(values) <= _COMPARED_PAIRS:
        flags, half = _scratch.arrays(len(here))[2], len(even)
        at_even, at_odd, scratch = flags[:half], flags[half : 2 * half], flags[2 * half :]
        np.equal(even, values[0], out=at_even)
        np.equal(odd, values[0], out=at_odd)
        for value in values[1:]:
            at_even |= np.equal(even, value, out=scratch)
            at_odd |= np.equal(odd, value, out=scratch)
    else:
        table = np.zeros(65536, np.bool_)
        table[list(values)] = True
        at_even, at_odd = table[even], table[odd]
    hit_even, hit_odd = _nonzero(at_even), _nonzero(at_odd)
    return np.concatenate((hit_even * 2, hit_odd * 2 + 1)), np.concatenate((even[hit_even], odd[hit_odd]))


def _verified(words: Words, starts: Ints, first: Words, form: bytes) -> Ints:
    """The ``starts`` at which all of ``form`` stands, compared a word at a time (``first``: the words at
    ``starts``, gathered once for every form found at the same offset)."""
    for at in range(0, len(form), _WORD):
        chunk = form[at : at + _WORD]
        found = words[starts + at] if at else first
        if len(chunk) < _WORD:
            found = found & np.uint64((1 << 8 * len(chunk)) - 1)
        starts = starts[found == np.uint64(int.from_bytes(chunk, "little"))]
    return starts


def scan_bytes(
    block: bytes | memoryview, forms: Sequence[tuple[bytes, int]], first_line: int = 1, base: int = 0
) -> Scan:
    """Scan ``block`` (whole lines; the last may lack its newline) for the ``(form, term index)`` pairs."""
    n = len(block)
    if n == 0:
        return _empty()
    here = _scratch.arrays(_padded(n))[0]
    here[:n] = np.frombuffer(block, np.uint8)
    return _scan(here, n, forms, first_line, base)


def _starts_at(anchored: Ints, offset: int, words: Words) -> tuple[Ints, Words]:
    """Candidate starts of the forms found ``offset`` bytes into them, and the words there."""
    starts = anchored - offset if offset else anchored
    if offset and len(starts) and starts.min() < 0:
        starts = starts[starts >= 0]
    return starts, words[starts]


def _mark_group(
    anchored: Ints, group: tuple[Anchored, ...], words: Words, n: int, newlines: Ints, mask: Words
) -> None:
    """Set in ``mask`` the bit of each form of ``group`` on every line where it stands, from the
    positions of the group's pair (``anchored``, none in the padding)."""
    at: dict[int, tuple[Ints, Words]] = {}  # offset -> candidate starts and the words there
    for form, index, offset in group:
        if offset not in at:
            at[offset] = _starts_at(anchored, offset, words)
        starts, first = at[offset]
        if len(starts) and starts.max() > n - len(form):  # only near the block's end
            inside = starts <= n - len(form)
            starts, first = starts[inside], first[inside]
        found = _verified(words, starts, first, form)
        if len(found):
            mask[np.searchsorted(newlines, found)] |= np.uint64(1 << index)


def _mark_plan(
    plan: _Plan,
    here: npt.NDArray[np.uint8],
    on: npt.NDArray[np.uint8],
    words: Words,
    n: int,
    newlines: Ints,
    mask: Words,
) -> None:
    """Set in ``mask`` the bits of every form of ``plan`` on the lines where it stands."""
    positions, pairs = _positions(here, on, plan.values)
    for value, group in plan.groups:
        anchored = positions[pairs == value] if len(plan.values) > 1 else positions
        if not len(anchored):
            continue
        if anchored.max() > n - 2:  # a pair in the padding: nothing starts there
            anchored = anchored[anchored <= n - 2]
        _mark_group(anchored, group, words, n, newlines, mask)


def _scan(
    buffer: npt.NDArray[np.uint8], n: int, forms: Sequence[tuple[bytes, int]], first_line: int, base: int
) -> Scan:
    """Scan the block in ``buffer[:n]`` (which has room for ``_PAD`` bytes after it)."""
    here, on, words = _aligned(buffer, n)
    newlines = _nonzero(np.equal(here, 10, out=_scratch.arrays(len(here))[2][: len(here)]))
    count = len(newlines) + (0 if here[n - 1] == 10 else 1)
    mask = np.zeros(count, np.uint64)
    plan = _plan(tuple(forms))
    if plan.values:
        _mark_plan(plan, here, on, words, n, newlines, mask)
    hit = np.flatnonzero(mask)
    starts = np.concatenate((np.zeros(1, np.int64), newlines + 1))[:count]
    ends = newlines if count == len(newlines) else np.append(newlines, n)
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
    """Scan ``path`` for the ``(form, term index)`` pairs, ``block`` bytes at a time, read straight into the
    buffer they are scanned in; the unfinished last line of a block moves to the buffer's start."""
    parts: list[Scan] = []
    lines, base, held = 0, 0, 0
    buffer = bytearray(block + _PAD)
    with path.open("rb") as handle:
        while True:
            if len(buffer) < held + block + _PAD:  # a line longer than a block: grow to hold it
                buffer.extend(bytes(held + block + _PAD - len(buffer)))
            got = handle.readinto(memoryview(buffer)[held : held + block])
            end = held + got
            last = buffer.rfind(b"\n", held, end) + 1 if got else end
            if got and last == 0:  # no line ends yet: read on
                held = end
                continue
            tail = bytes(buffer[last:end])  # the scan pads the block with zeros over it
            if last:
                found = _scan(np.frombuffer(buffer, np.uint8), last, forms, lines + 1, base)
                parts.append(found)
                lines += found.lines
                base += last
            if not got:
                break
            buffer[: len(tail)] = tail
            held = len(tail)
    return _joined(parts, lines)


def scan_lines(lines: Sequence[str], forms: Sequence[tuple[bytes, int]]) -> Scan:
    """Scan lines held in memory (a ticket or a pull request); offsets are line indexes."""
    if not lines:
        return _empty()
    found = scan_bytes("\n".join(lines).encode(), forms)
    return Scan(len(lines), found.line, found.line - 1, found.length, found.mask)

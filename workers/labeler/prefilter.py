"""The deterministic prefilter: every corpus line that carries a term is a candidate, scored by IDF.

A line is a document. A term's inverse document frequency is ``ln(N / df)`` over the ``N`` lines of
the whole corpus, so a term on every line counts for nothing and a rare one for much; a line's score
is the sum over the distinct terms it carries. No threshold is picked: every such line is a candidate.
Candidates are ranked within their instance (score, then source order, then line) and interleaved
across instances (the instance with the best line first), so one verbose run cannot fill a batch.
Each candidate carries an excerpt of its line centred on its rarest matched term, cut with ``CUT``.

Files are scanned in blocks (``workers.labeler.scan``), several at once in threads for a large corpus
(numpy lets go of the interpreter lock while it works); the result does not depend on how many ran.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ouroboros_gates.workers.labeler.scan import MAX_TERMS, Hit, Scan, scan_file, scan_lines
from ouroboros_gates.workers.labeler.terms import Term, search_forms

__all__ = ["CUT", "EXCERPT_CHARS", "Candidate", "Prefiltered", "Source", "prefilter", "read_line"]

CUT = "…"
"""The cut mark: where an excerpt leaves out part of its line."""

EXCERPT_CHARS = 320
"""An excerpt's width around the rarest term: a tool call's command with its context, a batch of eight
within a small model's context window."""

_PARALLEL_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class Source:
    """One searchable document of an instance: a file read lazily, or lines held in memory."""

    instance: str
    name: str
    path: Path | None = None
    text: tuple[str, ...] = field(default=(), repr=False)


@dataclass(frozen=True)
class Candidate:
    """A line that carries a term: where it is, its score, its terms (rarest first) and its excerpt."""

    instance: str
    file: str
    line: int
    score: float
    terms: tuple[str, ...]
    excerpt: str


@dataclass(frozen=True)
class Prefiltered:
    """The prefilter's answer: the first candidates in labelling order, how many there are in all, and the
    counts behind their scores (lines in the corpus, lines per term)."""

    candidates: tuple[Candidate, ...]
    found: int
    lines: int
    df: dict[str, int]


def read_line(source: Source, line: int) -> str | None:
    """Line ``line`` of ``source`` (without its newline), or None when it has fewer; a file is read line by
    line up to it, never whole."""
    if source.path is None:
        return source.text[line - 1] if 1 <= line <= len(source.text) else None
    return _read_file_line(source.path, line)


def _read_file_line(path: Path, line: int) -> str | None:
    """Line ``line`` of the file at ``path``, read line by line up to it; None when it has fewer."""
    if line < 1:
        return None
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if number == line:
                return raw.rstrip(b"\r\n").decode("utf-8", errors="replace")
    return None


def _scan_all(sources: Sequence[Source], forms: list[tuple[bytes, int]], threads: int | None) -> list[Scan]:
    files = [s.path for s in sources if s.path is not None]
    by_path = _scan_files(files, forms, _thread_count(threads))
    return [by_path[s.path] if s.path is not None else scan_lines(s.text, forms) for s in sources]


def _thread_count(threads: int | None) -> int:
    """The threads asked for, else one per core up to eight."""
    return threads if threads is not None else min(os.cpu_count() or 1, 8)


def _scan_files(files: list[Path], forms: list[tuple[bytes, int]], count: int) -> dict[Path, Scan]:
    """Each file's scan: in ``count`` threads when there are several files and enough bytes."""
    if _worth_threads(files, count):
        with ThreadPoolExecutor(max_workers=count) as pool:
            return dict(zip(files, pool.map(scan_file, files, [forms] * len(files)), strict=True))
    return {path: scan_file(path, forms) for path in files}


def _worth_threads(files: list[Path], count: int) -> bool:
    """Whether ``files`` are scanned in threads: several threads, several files and enough bytes."""
    return count > 1 and len(files) > 1 and sum(p.stat().st_size for p in files) >= _PARALLEL_BYTES


def _excerpt(text: str, rarest: Term) -> str:
    if len(text) <= EXCERPT_CHARS:
        return text
    centre = max(_term_at(text, rarest), 0) + len(rarest.text) // 2
    start = max(0, min(centre - EXCERPT_CHARS // 2, len(text) - EXCERPT_CHARS))
    end = start + EXCERPT_CHARS
    return (CUT if start > 0 else "") + text[start:end] + (CUT if end < len(text) else "")


def _term_at(text: str, term: Term) -> int:
    """Where ``term`` first appears in ``text``, as written or in its last search form; -1 when it does
    not."""
    at = -1
    for form in (term.text, search_forms(term.text)[-1].decode()):
        at = text.find(form)
        if at != -1:
            break
    return at


def _score_tables(idf: list[float]) -> list[npt.NDArray[np.float64]]:
    """For each byte of a term mask, the score of each of its 256 values (the sum of the IDF of the terms
    whose bits it sets): a line's score is then one lookup per byte, not one pass per term."""
    tables = []
    for low in range(0, len(idf), 8):
        weights = idf[low : low + 8]
        tables.append(
            np.array([sum(w for bit, w in enumerate(weights) if value >> bit & 1) for value in range(256)])
        )
    return tables


def _scores(mask: npt.NDArray[np.uint64], tables: list[npt.NDArray[np.float64]]) -> npt.NDArray[np.float64]:
    scores = np.zeros(len(mask), np.float64)
    for byte, table in enumerate(tables):
        if table.any():
            scores += table[((mask >> np.uint64(8 * byte)) & np.uint64(255)).astype(np.intp)]
    return scores


def _best(scores: npt.NDArray[np.float64], limit: int | None) -> npt.NDArray[np.intp]:
    """Indexes of the ``limit`` best scores, best first, ties in index order: the lines are concatenated in
    source order, each source's in line order, so a stable sort by score alone is the order by score, then
    source order, then line."""
    return np.argsort(-scores, kind="stable")[:limit]


def _ranked(
    sources: Sequence[Source], scans: list[Scan], idf: list[float], limit: int | None
) -> dict[str, list[tuple[float, int, int]]]:
    """Instance -> its best ``(score, source order, hit index)``: by score, then source order, then line."""
    tables = _score_tables(idf)
    return {
        instance: _ranked_instance(mine, scans, tables, limit)
        for instance, mine in _orders_by_instance(sources, scans).items()
    }


def _orders_by_instance(sources: Sequence[Source], scans: list[Scan]) -> dict[str, list[int]]:
    """Instance -> the source orders of its sources that hold a hit, in source order."""
    orders: dict[str, list[int]] = {}
    for order, source in enumerate(sources):
        if len(scans[order].line):
            orders.setdefault(source.instance, []).append(order)
    return orders


def _ranked_instance(
    mine: list[int], scans: list[Scan], tables: list[npt.NDArray[np.float64]], limit: int | None
) -> list[tuple[float, int, int]]:
    """One instance's best ``(score, source order, hit index)``, its sources' hits scored as one array."""
    scores = np.concatenate([_scores(scans[o].mask, tables) for o in mine])
    ends = np.cumsum([len(scans[o].line) for o in mine])
    best = _best(scores, limit)
    within = np.searchsorted(ends, best, side="right")
    return [
        (float(scores[b]), mine[w], int(b) - (int(ends[w - 1]) if w else 0))
        for b, w in zip(best, within, strict=True)
    ]


def prefilter(
    sources: Sequence[Source], terms: Sequence[Term], limit: int | None = None, threads: int | None = None
) -> Prefiltered:
    """Every line of ``sources`` carrying one of ``terms``, scored by IDF and interleaved across instances;
    the first ``limit`` (all when None) with their excerpts, and how many there are in all."""
    kept = list(terms[:MAX_TERMS])
    scans = _scan_all(sources, _forms(kept), threads)
    total = sum(scan.lines for scan in scans)
    df = _document_frequencies(scans, len(kept))
    idf = _idf(df, total)
    chosen = _interleaved(_ranked(sources, scans, idf, limit), limit)
    candidates = _candidates(sources, scans, chosen, kept, idf)
    found = sum(len(scan.line) for scan in scans)
    return Prefiltered(candidates, found, total, {t.text: n for t, n in zip(kept, df, strict=True)})


def _forms(terms: list[Term]) -> list[tuple[bytes, int]]:
    """Every search form of each term, with the term's index."""
    return [(form, index) for index, term in enumerate(terms) for form in search_forms(term.text)]


def _idf(df: list[int], total: int) -> list[float]:
    """Each term's ``ln(N / df)`` over ``total`` lines; 0 for a term no line carries."""
    return [math.log(total / n) if n else 0.0 for n in df]


def _document_frequencies(scans: list[Scan], terms: int) -> list[int]:
    """For each term, how many hit lines carry it."""
    return [sum(int(np.count_nonzero(s.mask & np.uint64(1 << i))) for s in scans) for i in range(terms)]


def _interleaved(
    ranked: dict[str, list[tuple[float, int, int]]], limit: int | None
) -> list[tuple[float, int, int]]:
    """The first ``limit`` rows taken a round at a time, one from each instance per round, the instances
    in the order of their best score (ties by name)."""
    instances = sorted(ranked, key=lambda name: (-ranked[name][0][0], name))
    rounds = zip_longest(*(ranked[name] for name in instances))
    return [row for round_ in rounds for row in round_ if row is not None][:limit]


def _candidates(
    sources: Sequence[Source],
    scans: list[Scan],
    chosen: list[tuple[float, int, int]],
    kept: list[Term],
    idf: list[float],
) -> tuple[Candidate, ...]:
    """The chosen rows as candidates, with their lines' text read."""
    taken = [(score, order, _hit(scans[order], index)) for score, order, index in chosen]
    texts = _texts(sources, [(order, hit) for _, order, hit in taken])
    return tuple(
        _candidate(sources[order], hit, score, kept, idf, texts[order, hit.line])
        for score, order, hit in taken
    )


def _hit(scan: Scan, index: int) -> Hit:
    mask = int(scan.mask[index])
    terms = frozenset(t for t in range(MAX_TERMS) if mask >> t & 1)
    return Hit(int(scan.line[index]), int(scan.offset[index]), int(scan.length[index]), terms)


def _texts(sources: Sequence[Source], wanted: list[tuple[int, Hit]]) -> dict[tuple[int, int], str]:
    """The text of each wanted line, each file opened once and read at the hits' offsets in file order."""
    texts: dict[tuple[int, int], str] = {}
    for order, hits in _hits_by_source(wanted).items():
        source = sources[order]
        if source.path is None:
            texts.update({(order, hit.line): source.text[hit.line - 1] for hit in hits})
        else:
            texts.update({(order, line): text for line, text in _read_hits(source.path, hits)})
    return texts


def _hits_by_source(wanted: list[tuple[int, Hit]]) -> dict[int, list[Hit]]:
    """Source order -> its wanted hits, in the order wanted."""
    by_source: dict[int, list[Hit]] = {}
    for order, hit in wanted:
        by_source.setdefault(order, []).append(hit)
    return by_source


def _read_hits(path: Path, hits: list[Hit]) -> list[tuple[int, str]]:
    """``(line, text)`` of each hit of one file, opened once and read at the hits' offsets in file order."""
    found = []
    with path.open("rb") as handle:
        for hit in sorted(hits, key=lambda h: h.offset):
            handle.seek(hit.offset)
            raw = handle.read(hit.length).rstrip(b"\r\n")
            found.append((hit.line, raw.decode("utf-8", errors="replace")))
    return found


def _candidate(
    source: Source, hit: Hit, score: float, terms: Sequence[Term], idf: list[float], text: str
) -> Candidate:
    order = sorted(hit.terms, key=lambda i: (-idf[i], i))
    excerpt = _excerpt(text, terms[order[0]])
    matched = tuple(terms[i].text for i in order)
    return Candidate(source.instance, source.name, hit.line, round(score, 6), matched, excerpt)

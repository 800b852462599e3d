"""Excerpts as the program and the memory see them (docs/decider.md, "Excerpts"): numbered lines, bounded, no
path, no repository, and advisory ids and security wording in comments replaced by ``<redacted>``.

A candidate's excerpt is at most 80 lines / 4,000 characters, centred on its changed or hit lines; a memory
example's at most 40 lines / 2,000 characters.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "CANDIDATE_BOUNDS",
    "EXAMPLE_BOUNDS",
    "Excerpt",
    "make_excerpt",
    "normalise",
    "normalised_sha",
    "redact_comments",
]

CANDIDATE_BOUNDS = (80, 4000)
EXAMPLE_BOUNDS = (40, 2000)
REDACTED = "<redacted>"

_ADVISORY = re.compile(
    r"\b(?:CVE-\d{4}-\d{4,}|GHSA(?:-[0-9a-z]{4}){3}|PYSEC-\d{4}-\d+|OSV-\d{4}-\d+|CWE-\d+|RUSTSEC-\d{4}-\d+)\b",
    re.IGNORECASE,
)
_SECURITY = re.compile(
    r"\b(?:secur\w*|vuln\w*|exploit\w*|inject\w*|xss|csrf|ssrf|rce|traversal|saniti[sz]\w*|unsafe|attack\w*|"
    r"malicious|taint\w*|advisory|cve|cwe|fix(?:es|ed)?|patch(?:es|ed)?|escap(?:e|es|ed|ing))\b",
    re.IGNORECASE,
)
_HASH_COMMENTS = {"python", "php", "ruby", "shell"}
_SLASH_COMMENTS = {"javascript", "typescript", "java", "php", "c", "cpp", "go", "rust", "csharp"}
_NUMBERED = re.compile(r"^\s*\d+ {2}", re.MULTILINE)


@dataclass(frozen=True)
class Excerpt:
    """Numbered, bounded, redacted lines of one function; ``sha`` is the content address of ``text``."""

    text: str
    first_line: int
    last_line: int

    @property
    def sha(self) -> str:
        """sha256 of the text: the blob's address."""
        return hashlib.sha256(self.text.encode()).hexdigest()

    def covers(self, line: int) -> bool:
        """Whether ``line`` is shown (a rationale may cite only shown lines)."""
        return self.first_line <= line <= self.last_line and f"\n{line:>4}  " in f"\n{self.text}"


def _segments(line: str, language: str, in_block: bool) -> tuple[list[tuple[bool, str]], bool]:
    """The line as (is_comment, text) pieces in order, and whether a block comment is still open."""
    slash, hashes = language in _SLASH_COMMENTS, language in _HASH_COMMENTS
    pieces: list[tuple[bool, str]] = []
    start = i = 0
    while i < len(line):
        if in_block:
            end = line.find("*/", i)
            stop = len(line) if end < 0 else end + 2
            pieces.append((True, line[start:stop]))
            start = i = stop
            in_block = end < 0
            continue
        i, kind = _comment_start(line, i, slash, hashes)
        if kind == "line":
            pieces += [(False, line[start:i]), (True, line[i:])]
            return _nonempty(pieces), False
        if kind == "block":
            pieces.append((False, line[start:i]))
            start, in_block = i, True
            i += 2
    pieces.append((in_block, line[start:]))
    return _nonempty(pieces), in_block


def _comment_start(line: str, i: int, slash: bool, hashes: bool) -> tuple[int, str | None]:
    """Where the next comment outside a string starts from ``i``, and whether it runs to the end of the line
    (``line``) or to a ``*/`` (``block``); the line's length and None when there is none."""
    while i < len(line):
        if line[i] in "'\"`":
            i = _string_end(line, i)
        elif _line_comment_at(line, i, slash, hashes):
            return i, "line"
        elif slash and line.startswith("/*", i):
            return i, "block"
        i += 1
    return len(line), None


def _line_comment_at(line: str, i: int, slash: bool, hashes: bool) -> bool:
    """Whether a comment to the end of the line (``#`` or ``//``, as the language has it) starts here."""
    return (hashes and line[i] == "#") or (slash and line.startswith("//", i))


def _string_end(line: str, i: int) -> int:
    """The index of the quote that closes the string opening at ``i`` (past the line when it stays open)."""
    quote, i = line[i], i + 1
    while i < len(line) and line[i] != quote:
        i += 2 if line[i] == "\\" else 1
    return i


def _nonempty(pieces: list[tuple[bool, str]]) -> list[tuple[bool, str]]:
    return [p for p in pieces if p[1]]


def _redact(comment: str) -> str:
    if _SECURITY.search(comment) or _ADVISORY.search(comment):
        marker = re.match(r"^\s*(#+|//+|/\*+)?\s*", comment)
        lead = marker.group(0) if marker else ""
        tail = " */" if comment.rstrip().endswith("*/") else ""
        return f"{lead}{REDACTED}{tail}"
    return comment


def redact_comments(lines: Sequence[str], language: str) -> list[str]:
    """Each comment that names an advisory id or uses security wording becomes ``<redacted>``; code stays."""
    out: list[str] = []
    in_block = False
    for line in lines:
        pieces, in_block = _segments(line, language, in_block)
        out.append("".join(_redact(text) if comment else text for comment, text in pieces))
    return out


def _window(count: int, start_line: int, focus: Sequence[int], max_lines: int) -> tuple[int, int]:
    """Indexes [lo, hi) of at most ``max_lines`` lines centred on the focus lines (or the whole)."""
    if count <= max_lines:
        return 0, count
    centre = _centre(count, start_line, focus)
    lo = max(0, min(centre - max_lines // 2, count - max_lines))
    return lo, lo + max_lines


def _centre(count: int, start_line: int, focus: Sequence[int]) -> int:
    """The index of the median focus line within the function (its middle when no focus line is in it)."""
    inside = sorted(f - start_line for f in focus if 0 <= f - start_line < count)
    return inside[len(inside) // 2] if inside else count // 2


def make_excerpt(
    code: str,
    start_line: int,
    language: str,
    *,
    focus: Sequence[int] = (),
    bounds: tuple[int, int] = CANDIDATE_BOUNDS,
) -> Excerpt:
    """The excerpt of a function whose first line is ``start_line``; empty code is refused."""
    raw = code.splitlines()
    if not any(line.strip() for line in raw):
        raise ValueError("an excerpt of an empty function: nothing to show")
    max_lines, max_chars = bounds
    lines = redact_comments([line.rstrip() for line in raw], language)
    lo, hi = _window(len(lines), start_line, focus, max_lines)
    numbered = [f"{start_line + i:>4}  {lines[i]}" for i in range(lo, hi)]
    lo += _fit(numbered, (lo + hi) // 2 - lo, max_chars)
    text = "\n".join(numbered)[:max_chars]
    last = lo + len(numbered) - 1
    return Excerpt(text=text, first_line=start_line + lo, last_line=start_line + last)


def _fit(numbered: list[str], centre: int, max_chars: int) -> int:
    """Drop lines from the end farther from the centre until the lines fit ``max_chars`` (the focus stays in
    view); returns how many were dropped from the top."""
    dropped = 0
    while len(numbered) > 1 and sum(len(n) + 1 for n in numbered) - 1 > max_chars:
        if centre >= len(numbered) - 1 - centre:
            numbered.pop(0)
            dropped += 1
            centre -= 1
        else:
            numbered.pop()
    return dropped


def normalise(text: str) -> str:
    """The excerpt without line numbers or trailing space: the same code at another line embeds the same."""
    return "\n".join(line.rstrip() for line in _NUMBERED.sub("", text).splitlines()).strip("\n")


def normalised_sha(text: str) -> str:
    """The embedding cache key: sha256 of the normalised excerpt."""
    return hashlib.sha256(normalise(text).encode()).hexdigest()

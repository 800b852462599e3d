"""The prefilter's search terms: what a ticket's fact lines and predicate name literally.

From the fact lines: every double-quoted literal, every snake_case name and every command-line flag;
from the predicate: every backticked span. A term is searched as written and, where they differ, in
its JSON-string form (a JSONL line carries ``"`` as ``\\"``), so a literal with a quote in it still
finds the line. Order is first appearance, so the same ticket always gives the same terms.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Term", "search_forms", "terms_of"]

_QUOTED = re.compile(r'"((?:[^"\\\n]|\\.)+)"')
_BACKTICKED = re.compile(r"`([^`\n]+)`")
_SNAKE = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![A-Za-z0-9_])")
_FLAG = re.compile(r"(?<![\w-])--?[A-Za-z][A-Za-z0-9-]*(?![\w-])")
_MIN_LENGTH = 2


@dataclass(frozen=True)
class Term:
    """One search term and where it came from (``quoted``, ``snake_case``, ``flag`` or ``backticked``)."""

    text: str
    origin: str


def _unescape(literal: str) -> str:
    try:
        value = json.loads(f'"{literal}"')
    except ValueError:
        return literal
    return value if isinstance(value, str) else literal


def terms_of(facts: Iterable[str], predicate: str) -> tuple[Term, ...]:
    """The terms of a ticket, each once, in order of first appearance (fact lines first)."""
    found: dict[str, Term] = {}

    def add(text: str, origin: str) -> None:
        text = text.strip()
        if len(text) >= _MIN_LENGTH and text not in found:
            found[text] = Term(text, origin)

    for line in facts:
        for match in _QUOTED.finditer(line):
            add(_unescape(match.group(1)), "quoted")
        for match in _SNAKE.finditer(line):
            add(match.group(0), "snake_case")
        for match in _FLAG.finditer(line):
            add(match.group(0), "flag")
    for match in _BACKTICKED.finditer(predicate):
        add(match.group(1), "backticked")
    return tuple(found.values())


def search_forms(term: str) -> tuple[bytes, ...]:
    """The byte strings that carry ``term`` on a line: as written, and JSON-escaped when that differs."""
    raw = term.encode()
    escaped = json.dumps(term, ensure_ascii=False)[1:-1].encode()
    return (raw,) if escaped == raw else (raw, escaped)

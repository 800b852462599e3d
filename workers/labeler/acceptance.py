"""Acceptance with no human in the loop: a positive stands only when it reproduces.

Through the ticket's miner when one is registered (its facts, read from the instance, must name the
instance on the line the label names, in the file it names: a session's transcript or a subagent's);
otherwise by its quote being verbatim on that line: every fragment of the quote, split at the excerpt's
cut mark, is on the line in order, read as written or with the JSON line's string escapes decoded.
Either way, a quote lifted from the ticket's own words fails: it shows the ticket's vocabulary, not an
instance. A negative is never checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ouroboros_gates.schemas import Acceptance, Span
from ouroboros_gates.workers.labeler.prefilter import CUT

__all__ = ["Reproducer", "Verdict", "decode_escapes", "fragments", "in_order", "judge", "lifted"]

_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|[\"\\/bfnrt])")
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_SPACE = re.compile(r"\s+")

Reproducer = Callable[[str, Span], tuple[bool, str]]
"""``(instance, where) -> (reproduced, why)``: the ticket's miner asked about one labelled line of a file."""


@dataclass(frozen=True)
class Verdict:
    """An acceptance and its why."""

    acceptance: Acceptance
    why: str


def decode_escapes(line: str) -> str:
    """``line`` with its JSON string escapes decoded (``\\"`` to ``"``, ``\\n`` to a newline,
    ``\\u00e9``…)."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        return chr(int(code[1:], 16)) if code[0] == "u" else _SIMPLE[code]

    return _ESCAPE.sub(one, line)


def fragments(quote: str) -> list[str]:
    """The quote's fragments: split at the cut mark, each stripped, the empty ones dropped."""
    return [part.strip() for part in quote.split(CUT) if part.strip()]


def in_order(parts: list[str], line: str) -> bool:
    """Whether every part is on ``line``, each after the one before it."""
    at = 0
    for part in parts:
        found = line.find(part, at)
        if found == -1:
            return False
        at = found + len(part)
    return True


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def lifted(quote: str, ticket_words: str) -> bool:
    """Whether every fragment of ``quote`` is in the ticket's own words (as written or unescaped)."""
    parts = [_normal(p) for p in fragments(quote)]
    words = {_normal(ticket_words), _normal(decode_escapes(ticket_words))}
    return bool(parts) and any(all(p in text for p in parts) for text in words)


def judge(
    positive: bool,
    quote: str,
    instance: str,
    where: Span,
    line_text: str | None,
    ticket_words: str,
    reproduce: Reproducer | None = None,
) -> Verdict:
    """Accept, reject (with why) or leave unchecked one proposed label on line ``where`` of one of the
    instance's files."""
    line = where.line
    if not positive:
        return Verdict(Acceptance.UNCHECKED, "a negative is not checked")
    if not fragments(quote):
        return Verdict(Acceptance.REJECTED, "the quote is empty")
    if lifted(quote, ticket_words):
        return Verdict(Acceptance.REJECTED, "the quote is lifted from the ticket's own words")
    if line_text is None:
        return Verdict(Acceptance.REJECTED, f"{instance} has no line {line}")
    if reproduce is not None:
        return _reproduced(reproduce, instance, where)
    return _on_line(fragments(quote), line, line_text)


def _reproduced(reproduce: Reproducer, instance: str, where: Span) -> Verdict:
    """Accepted when the miner reproduces the label, else rejected; either way with the miner's why."""
    reproduced, why = reproduce(instance, where)
    return Verdict(Acceptance.ACCEPTED if reproduced else Acceptance.REJECTED, why)


def _on_line(parts: list[str], line: int, line_text: str) -> Verdict:
    """Accepted when the quote's fragments are on the line in order (as written, or its JSON escapes
    decoded); else rejected, naming the first fragment missing or saying they are out of order."""
    if in_order(parts, line_text):
        return Verdict(
            Acceptance.ACCEPTED, f"every fragment of the quote ({len(parts)}) is on line {line} in order"
        )
    if in_order(parts, decode_escapes(line_text)):
        return Verdict(
            Acceptance.ACCEPTED,
            f"every fragment of the quote ({len(parts)}) is on line {line} in order, "
            "its JSON escapes decoded",
        )
    missing = _first_missing(parts, line_text)
    if missing is not None:
        return Verdict(Acceptance.REJECTED, f"not on line {line}: {_short(missing)!r}")
    return Verdict(Acceptance.REJECTED, f"the quote's fragments are on line {line} but not in order")


def _first_missing(parts: list[str], line_text: str) -> str | None:
    """The first fragment on the line neither as written nor with its JSON escapes decoded, or None."""
    return next((p for p in parts if p not in line_text and p not in decode_escapes(line_text)), None)


def _short(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 1] + CUT

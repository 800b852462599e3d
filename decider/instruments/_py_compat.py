"""Python source that this interpreter's parser refuses, rewritten so that it parses, line for line.

Bandit builds its tree with the running interpreter's ``ast``; a file written for a newer Python (3.12's
f-strings with the outer quote, a backslash or a comment inside ``{...}``: PEP 701) does not parse on 3.11,
and Bandit then reads nothing of it. tree-sitter reads those f-strings, so each one the interpreter refuses is
rewritten as a triple-quoted f-string (which may span lines and hold either quote) whose replacement fields
keep every expression this interpreter parses and put a placeholder name, on as many lines, in place of one it
does not. Every other character, and so every line number Bandit reports, is kept.
"""

from __future__ import annotations

import ast
import warnings

from tree_sitter import Node

from ouroboros_gates.decider.languages import syntax_tree

__all__ = ["PLACEHOLDER", "parseable"]

PLACEHOLDER = "__ouro_expression__"
"""The name an expression this interpreter cannot parse becomes (Bandit sees a variable, as it would)."""


def _parses(source: str, mode: str = "exec") -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like: not our concern here
            ast.parse(source, mode=mode)
    except (SyntaxError, ValueError):
        return False
    return True


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def _f_strings(node: Node) -> list[Node]:
    """The outermost f-strings under ``node``."""
    if node.type == "string":
        return [node] if _is_f_string(node) else []
    return [found for child in node.children for found in _f_strings(child)]


def _is_f_string(string: Node) -> bool:
    """Whether a string's opening quote carries the ``f`` prefix."""
    start = string.child(0)
    return start is not None and start.type == "string_start" and "f" in _text(start).lower()


def _between(node: Node, start: int, end: int) -> str:
    """The text of ``node`` from byte ``start`` to byte ``end`` of the file."""
    return (node.text or b"")[start - node.start_byte : end - node.start_byte].decode("utf-8", "replace")


def _field(node: Node) -> str:
    """One replacement field ``{expr!r:spec}`` with its expression kept when it parses here, else a
    placeholder on as many lines; a comment in it (3.12) is dropped, the line breaks around it kept."""
    parts, at = [], node.start_byte
    for child in node.children:
        parts.append(_between(node, at, child.start_byte))
        at = child.end_byte
        parts.append(_field_part(child))
    return "".join(parts)


_VERBATIM = ("type_conversion", "format_specifier", "format_expression")


def _field_part(child: Node) -> str:
    """A part of a replacement field as rewritten: a comment dropped, the braces, ``!r`` and the format
    spec as they are, the expression through ``_expression``."""
    if child.type == "comment":
        return ""
    if not child.is_named or child.type in _VERBATIM:
        return _text(child)
    return _expression(_text(child))


def _expression(text: str) -> str:
    """An expression kept when it parses here, else a placeholder on as many lines."""
    if "\\" in text or "#" in text or not _parses(f"(\n{text}\n)", "eval"):
        return PLACEHOLDER + "\n" * text.count("\n")
    return text


def _rewritten(node: Node) -> str | None:
    """The f-string as a triple-quoted one that parses here, or None when no quote can close it."""
    start, end = node.child(0), node.child(node.child_count - 1)
    if start is None or end is None:
        return None
    prefix = _text(start).rstrip("\"'")
    return _triple_quoted(prefix, _body(node, start, end))


def _body(node: Node, start: Node, end: Node) -> str:
    """An f-string's text between its quotes, each replacement field as ``_field`` rewrites it."""
    at, pieces = start.end_byte, []
    for child in node.children[1:-1]:
        pieces.append(_between(node, at, child.start_byte))
        pieces.append(_field(child) if child.type == "interpolation" else _text(child))
        at = child.end_byte
    pieces.append(_between(node, at, end.start_byte))
    return "".join(pieces)


def _triple_quoted(prefix: str, body: str) -> str | None:
    """The body in the first triple quote that closes it and parses, or None."""
    for quote in ('"', "'"):
        if _closes(quote, body):
            candidate = f"{prefix}{quote * 3}{body}{quote * 3}"
            if _parses(candidate, "eval"):
                return candidate
    return None


def _closes(quote: str, body: str) -> bool:
    """Whether three of ``quote`` can close ``body``: none in it, none escaped in it, none at its end."""
    return quote * 3 not in body and not body.endswith(quote) and "\\" + quote * 2 not in body


def parseable(source: str) -> str | None:
    """``source`` when this interpreter parses it; else the same source with each f-string it refuses
    rewritten (same lines); None when that still does not parse (other syntax than f-strings, or Python 2)."""
    if _parses(source):
        return source
    edits = _edits(source)
    if not edits:  # an f-string no quote closes (None), or nothing to rewrite
        return None
    rewritten = _applied(source, edits)
    return rewritten if _parses(rewritten) else None


def _edits(source: str) -> list[tuple[int, int, bytes]] | None:
    """(start byte, end byte, new bytes) of each f-string this interpreter refuses, rewritten; None when one
    cannot be."""
    edits: list[tuple[int, int, bytes]] = []
    for node in _f_strings(syntax_tree("python", source)):
        if _parses(_text(node), "eval"):
            continue
        new = _rewritten(node)
        if new is None:
            return None
        edits.append((node.start_byte, node.end_byte, new.encode("utf-8", "surrogateescape")))
    return edits


def _applied(source: str, edits: list[tuple[int, int, bytes]]) -> str:
    """``source`` with the edits made, from its end back so that the byte offsets hold."""
    data = source.encode("utf-8", "surrogateescape")
    for start, end, text in sorted(edits, reverse=True):
        data = data[:start] + text + data[end:]
    return data.decode("utf-8", "surrogateescape")

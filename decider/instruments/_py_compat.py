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
        start = node.child(0)
        if start is not None and start.type == "string_start" and "f" in _text(start).lower():
            return [node]
        return []
    return [found for child in node.children for found in _f_strings(child)]


def _field(node: Node) -> str:
    """One replacement field ``{expr!r:spec}`` with its expression kept when it parses here, else a
    placeholder on as many lines; a comment in it (3.12) is dropped, the line breaks around it kept."""
    parts, at = [], node.start_byte
    whole = node.text or b""
    for child in node.children:
        parts.append(
            whole[at - node.start_byte : child.start_byte - node.start_byte].decode("utf-8", "replace")
        )
        at = child.end_byte
        text = _text(child)
        if child.type == "comment":
            continue
        if not child.is_named or child.type in ("type_conversion", "format_specifier", "format_expression"):
            parts.append(text)
        elif "\\" in text or "#" in text or not _parses(f"(\n{text}\n)", "eval"):
            parts.append(PLACEHOLDER + "\n" * text.count("\n"))
        else:
            parts.append(text)
    return "".join(parts)


def _rewritten(node: Node) -> str | None:
    """The f-string as a triple-quoted one that parses here, or None when no quote can close it."""
    start, end = node.child(0), node.child(node.child_count - 1)
    if start is None or end is None:
        return None
    prefix = _text(start).rstrip("\"'")
    return _triple_quoted(prefix, _body(node, start, end))


def _body(node: Node, start: Node, end: Node) -> str:
    """An f-string's text between its quotes, each replacement field as ``_field`` rewrites it."""
    whole, at, pieces = node.text or b"", start.end_byte, []
    for child in node.children[1:-1]:
        pieces.append(
            whole[at - node.start_byte : child.start_byte - node.start_byte].decode("utf-8", "replace")
        )
        pieces.append(_field(child) if child.type == "interpolation" else _text(child))
        at = child.end_byte
    pieces.append(whole[at - node.start_byte : end.start_byte - node.start_byte].decode("utf-8", "replace"))
    return "".join(pieces)


def _triple_quoted(prefix: str, body: str) -> str | None:
    """The body in the first triple quote that closes it and parses, or None."""
    for quote in ('"', "'"):
        if quote * 3 not in body and not body.endswith(quote) and "\\" + quote * 2 not in body:
            candidate = f"{prefix}{quote * 3}{body}{quote * 3}"
            if _parses(candidate, "eval"):
                return candidate
    return None


def parseable(source: str) -> str | None:
    """``source`` when this interpreter parses it; else the same source with each f-string it refuses
    rewritten (same lines); None when that still does not parse (other syntax than f-strings, or Python 2)."""
    if _parses(source):
        return source
    data = source.encode("utf-8", "surrogateescape")
    edits: list[tuple[int, int, bytes]] = []
    for node in _f_strings(syntax_tree("python", source)):
        if _parses(_text(node), "eval"):
            continue
        new = _rewritten(node)
        if new is None:
            return None
        edits.append((node.start_byte, node.end_byte, new.encode("utf-8", "surrogateescape")))
    if not edits:
        return None
    for start, end, text in sorted(edits, reverse=True):
        data = data[:start] + text + data[end:]
    rewritten = data.decode("utf-8", "surrogateescape")
    return rewritten if _parses(rewritten) else None

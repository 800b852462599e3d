"""Source files read through tree-sitter: functions, their parameters, calls and assignments.

What is extracted is deliberately small: enough to map a changed line to its enclosing function, to build
a call graph by callee name, and to follow a parameter into a call's argument through local assignments.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

import tree_sitter_c
import tree_sitter_cpp
import tree_sitter_java
import tree_sitter_javascript
import tree_sitter_php
import tree_sitter_python
import tree_sitter_typescript
from tree_sitter import Language, Node, Parser

from ouroboros_gates.decider._syntax import GLOBAL, GRAMMARS, Call, Function, Walker, simple_name

if TYPE_CHECKING:
    from ouroboros_gates.decider.instruments.taint import Flow

TAINT_LANGUAGES = ("c", "cpp", "java", "javascript", "php", "python", "typescript")
"""Languages whose functions the taint step reads (``instruments.taint``; C and C++ for memory flows)."""
SCRIPT_LANGUAGES = frozenset({"javascript", "php", "python", "typescript"})
"""Languages whose files run top to bottom: the code outside any function is walked too, as ``<global>``."""

__all__ = [
    "GLOBAL",
    "LANGUAGES",
    "Call",
    "Function",
    "ParsedFile",
    "language_of",
    "parse_source",
    "simple_name",
    "syntax_tree",
]

LANGUAGES: tuple[str, ...] = ("c", "cpp", "java", "javascript", "php", "python", "typescript")
"""The languages candidates are built for (``lang.*`` features are one-hot over these)."""

_EXTENSIONS: dict[str, str] = {
    f".{ext}": language
    for language, exts in {
        "python": "py",
        "javascript": "js mjs cjs jsx",
        "typescript": "ts mts cts tsx",
        "java": "java",
        "php": "php",
        "c": "c h",
        "cpp": "cc cpp cxx hh hpp hxx",
    }.items()
    for ext in exts.split()
}

_LOADERS: dict[str, Callable[[], object]] = {
    "python": tree_sitter_python.language,
    "javascript": tree_sitter_javascript.language,
    "typescript": tree_sitter_typescript.language_typescript,
    "tsx": tree_sitter_typescript.language_tsx,
    "java": tree_sitter_java.language,
    "php": tree_sitter_php.language_php,
    "c": tree_sitter_c.language,
    "cpp": tree_sitter_cpp.language,
}


def language_of(path: str) -> str | None:
    """The language of a file by its extension, or None when no grammar covers it."""
    return _EXTENSIONS.get(PurePosixPath(path).suffix.lower())


@dataclass(frozen=True)
class ParsedFile:
    """A file at one revision: its language, lines, functions and whether tree-sitter parsed it cleanly."""

    path: str
    language: str
    lines: tuple[str, ...]
    functions: tuple[Function, ...]
    has_errors: bool
    flows: tuple[Flow, ...] = ()
    frameworks: frozenset[str] = frozenset()
    """The framework and library ids the file imports (``decider.frameworks``)."""

    def enclosing(self, line: int) -> Function:
        """The innermost function whose span holds ``line``, else ``<global>`` (always the last entry)."""
        best: Function | None = None
        for function in self.functions[:-1]:
            if function.start_line <= line <= function.end_line and (
                best is None or function.start_line >= best.start_line
            ):
                best = function
        return best if best is not None else self.functions[-1]

    def source_of(self, function: Function) -> str:
        """The function's source lines joined (the whole file for ``<global>``)."""
        return "\n".join(self.lines[function.start_line - 1 : function.end_line])


@cache
def _language(grammar: str) -> Language:
    return Language(_LOADERS[grammar]())


_LOCAL = threading.local()


def _parser(grammar: str) -> Parser:
    """A parser per thread and grammar: a tree-sitter parser is not shared between threads."""
    parsers: dict[str, Parser] = _LOCAL.__dict__.setdefault("parsers", {})
    if grammar not in parsers:
        parsers[grammar] = Parser(_language(grammar))
    return parsers[grammar]


def syntax_tree(language: str, source: str) -> Node:
    """The root of tree-sitter's tree of ``source`` (a file or one function's text) in ``language``."""
    return _parser(language).parse(source.encode("utf-8", errors="replace")).root_node


def parse_source(path: str, language: str, source: bytes) -> ParsedFile:
    """Parse ``source``; a file with syntax errors still yields what tree-sitter recovered."""
    grammar = "tsx" if path.lower().endswith(".tsx") else language
    tree = _parser(grammar).parse(source)
    walker = Walker(GRAMMARS[language])
    walker.visit(tree.root_node, (), None)
    text = source.decode("utf-8", errors="replace")
    lines = tuple(text.split("\n"))
    functions = [walker.build(frame) for frame in walker.frames]
    global_fn = Function(
        name=GLOBAL,
        start_line=1,
        end_line=_last_line(lines),
        params=(),
        calls=tuple(walker.global_calls),
        assignments=tuple(walker.global_assignments),
    )
    flows = _flows(language, walker, tree.root_node)
    from ouroboros_gates.decider.frameworks import imported

    return ParsedFile(
        path=path,
        language=language,
        lines=lines,
        functions=(*functions, global_fn),
        has_errors=tree.root_node.has_error,
        flows=flows,
        frameworks=imported(language, lines),
    )


def _last_line(lines: tuple[str, ...]) -> int:
    """The file's last line (a final newline ends the last line; it does not start another)."""
    return max(1, len(lines) - (1 if lines and lines[-1] == "" else 0))


def _flows(language: str, walker: Walker, root: Node) -> tuple[Flow, ...]:
    """The taint step's flows in the file's functions (and a script's top-level code); none for a language
    the step does not cover."""
    if language not in TAINT_LANGUAGES:
        return ()
    from ouroboros_gates.decider.instruments.taint import find_flows

    walked = [(frame.name, frame.node) for frame in walker.frames]
    if language in SCRIPT_LANGUAGES:  # a script's top-level code is read as one more function
        walked.append((GLOBAL, root))
    return find_flows(language, walked)

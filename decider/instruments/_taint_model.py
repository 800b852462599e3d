"""The taint tracker's data: its vocabulary, the taint a value carries, a flow and a function's summary
(the constants it folds: ``_taint_fold``; the containers it follows: ``_taint_slots``)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from tree_sitter import Node

from ouroboros_gates.decider.instruments.base import RULESET, digest_files

__all__ = [
    "CONSTANT",
    "LITERALS",
    "PARAMETER",
    "SKIP",
    "TAINT_LANGUAGES",
    "UNHANDLED",
    "Entry",
    "Flow",
    "Summary",
    "Taint",
    "TaintVocabulary",
    "join_taints",
    "node_text",
    "simple_type",
    "taint_version",
    "vocabulary_of",
]


TAINT_LANGUAGES = ("c", "cpp", "java", "javascript", "php", "python", "typescript")
"""The languages the taint step reads (others: no coverage); C and C++ through the memory step."""


def _vocabulary_file(language: str) -> str:
    return {"cpp": "c", "typescript": "javascript"}.get(language, language)


PARAMETER = "parameter"
"""The source kind of a function's own parameters."""
CONSTANT = "constant"
"""The source kind of a sink call whose data arguments are all constants: a guarded flow, never a live one."""
UNHANDLED = object()
"""A container operation the precise model does not follow (the caller falls back to plain flow)."""


@dataclass(frozen=True)
class Entry:
    """One vocabulary entry: a source, a sink or a sanitiser, and the calls it matches."""

    id: str
    names: frozenset[str]
    receiver: re.Pattern[str] | None
    kind: str = ""  # a source's kind
    operation: str = ""  # a sink's operation
    args: tuple[int, ...] | None = None  # None: any argument
    operations: frozenset[str] = frozenset()  # a sanitiser's operations ("*": all)
    attributes: tuple[str, ...] = ()
    tag: str | None = None  # a framework or library prior: active only when priors are on
    pattern: re.Pattern[str] | None = None  # names by shape (``run_ssh``), for a sink: lower confidence
    argv_safe: bool = False  # a list or tuple argument is an argument vector, not a string to parse
    subject: str = ""  # a validator's: "receiver" (``name.isdigit()``), else the argument ``args`` names
    anchored: bool = False  # a validator whose first argument is a pattern: only one anchored at both ends
    made_by: re.Pattern[str] | None = (
        None  # a validator's subject must be a local bound to a call matching it
    )
    safe_args: re.Pattern[str] | None = (
        None  # a sink's call whose arguments' text matches this is safe (a Loader)
    )
    first_param: str = (
        ""  # a route's: a function whose first parameter has this name (a Django view's request)
    )
    clean: bool = (
        False  # a sink whose result carries no taint of its arguments (``open(name)``: the file's data)
    )
    html: re.Pattern[str] | None = (
        None  # a route's: what it returns is the page when its decorator matches this
    )
    external: bool = False  # a sink's: only external input counts, a parameter alone raises nothing
    call_text: re.Pattern[str] | None = (
        None  # a sanitiser's: it clears only a call whose text matches this (``replace("\\n", "")``)
    )

    def priors(self) -> list[str]:
        """The frameworks or libraries the entry's prior is any of (none without a tag)."""
        return [t for t in (self.tag or "").split("|") if t]

    def applies(self, name: str, receiver: str) -> bool:
        """Whether a call of ``name`` on ``receiver`` (as written) is this entry."""
        named = name in self.names or (self.pattern is not None and bool(self.pattern.search(name)))
        return named and (self.receiver is None or bool(self.receiver.search(receiver)))


@dataclass(frozen=True)
class TaintVocabulary:
    """One language's sources, sinks, sanitisers, validators and container mutators."""

    sources: tuple[Entry, ...]
    sinks: tuple[Entry, ...]
    sanitizers: tuple[Entry, ...]
    mutators: frozenset[str]
    validators: tuple[Entry, ...] = ()
    """Tests that, when they hold, make a variable safe for their operations (``if name.isdigit():``)."""
    routes: tuple[Entry, ...] = ()
    """Functions a framework calls with request data: a decorator it routes by (``@app.get("/items/{id}")``)
    or a first parameter it passes the request as; their parameters are request data."""


@dataclass(frozen=True)
class Taint:
    """What a value carries: the first source's kind and line, and the operations a sanitiser cleared."""

    kind: str
    line: int
    cleared: frozenset[str] = frozenset()
    via_call: bool = False
    tag: str | None = None
    route: bool = (
        False  # a route's parameter: request data under its framework's prior, a parameter without it
    )
    what: str = ""  # the source as written (``request.args``, a parameter's name), for the report
    steps: tuple[int, ...] = ()  # the lines of the assignments it went through (the last few), for the report

    def reaches(self, operation: str) -> bool:
        """Whether this value is still dangerous for ``operation``."""
        return "*" not in self.cleared and operation not in self.cleared


@dataclass(frozen=True)
class Flow:
    """A source that reached a sink in one function (``sanitized``: only through a sanitiser for it)."""

    function: str
    operation: str
    sink: str
    sink_line: int
    call: str
    source_kind: str
    source_line: int
    sanitized: bool = False
    via_call: bool = False
    tags: tuple[str, ...] = ()  # the framework/library priors the source or the sink depends on
    route: str | None = (
        None  # the source is a route's parameter under this prior (a parameter when it is off)
    )
    source: str = ""  # what the source is, as written (``request.args``, a parameter's name)
    steps: tuple[int, ...] = ()  # the assignments between the source and the sink, by line

    def describe(self) -> str:
        """One line for a signal's message."""
        how = " through a sanitiser" if self.sanitized else (" through a call" if self.via_call else "")
        return (
            f"{self.source_kind} (line {self.source_line}) reaches {self.call} ({self.operation}) at line "
            f"{self.sink_line}{how}"
        )


def join_taints(*values: Taint | None) -> Taint | None:
    found = [v for v in values if v is not None]
    if not found:
        return None
    best = min(found, key=lambda t: (len(t.cleared), t.kind == PARAMETER, t.tag is not None, t.line))
    cleared = frozenset.intersection(*(t.cleared for t in found))
    return replace(best, cleared=cleared, via_call=any(t.via_call for t in found))


@cache
def vocabulary_of(language: str) -> TaintVocabulary | None:
    """The packaged vocabulary of a language, or None when the tracker does not cover it."""
    path = RULESET / "taint" / f"{_vocabulary_file(language)}.toml"
    if language not in TAINT_LANGUAGES or not path.exists():
        return None
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    return TaintVocabulary(
        sources=_entries(raw, "source", language),
        sinks=_entries(raw, "sink", language),
        sanitizers=_entries(raw, "sanitizer", language),
        mutators=frozenset(raw.get("propagate", {}).get("mutators", [])),
        validators=_entries(raw, "validator", language),
        routes=_entries(raw, "route", language),
    )


def _entries(raw: dict[str, Any], kind: str, language: str) -> tuple[Entry, ...]:
    """The entries of one table of a vocabulary file (``[[source]]``, ``[[sink]]``, ...), in order."""
    return tuple(_entry(r, kind, language) for r in raw.get(kind, []))


def _entry(row: dict[str, object], kind: str, language: str) -> Entry:
    """One row of a vocabulary file (``kind``: its table) as an entry; a bad row names itself."""
    where = f"taint/{language}.toml: {kind} {row.get('id')!r}"
    try:
        return Entry(
            id=str(row["id"]),
            names=frozenset(_texts(row, "names")),
            receiver=_regex(row, "receiver"),
            kind=str(row.get("kind", "")),
            operation=str(row.get("operation", "")),
            args=_read_args(row),
            operations=frozenset(_texts(row, "operations")),
            attributes=tuple(_texts(row, "attributes")),
            tag=_tag(row),
            pattern=_regex(row, "pattern"),
            argv_safe=bool(row.get("argv_safe", False)),
            subject=str(row.get("subject", "")),
            anchored=bool(row.get("anchored", False)),
            made_by=_regex(row, "made_by"),
            safe_args=_regex(row, "safe_args"),
            first_param=str(row.get("first_param", "")),
            clean=bool(row.get("clean", False)),
            html=_regex(row, "html"),
            external=bool(row.get("external", False)),
            call_text=_regex(row, "call_text"),
        )
    except (KeyError, TypeError, ValueError, re.error) as exc:
        raise ValueError(f"{where}: {exc}") from exc


def _texts(row: dict[str, object], key: str) -> list[str]:
    """A list under ``key`` as strings (empty when the row has none)."""
    return [str(item) for item in row.get(key, [])]  # type: ignore[attr-defined]


def _read_args(row: dict[str, object]) -> tuple[int, ...] | None:
    """The argument positions a sink reads (None: ``"any"``, the default)."""
    args = row.get("args", "any")
    return None if args == "any" else tuple(int(a) for a in args)  # type: ignore[attr-defined]


def _regex(row: dict[str, object], key: str) -> re.Pattern[str] | None:
    """An entry's pattern under ``key``, compiled; None when it has none."""
    value = row.get(key)
    return re.compile(str(value)) if value is not None else None


def _tag(row: dict[str, object]) -> str | None:
    """An entry's prior: its framework or library id; a list of ids is any of them (``flask|fastapi``)."""
    value = row.get("framework", row.get("library"))
    if value is None:
        return None
    return "|".join(sorted(str(v) for v in value)) if isinstance(value, list) else str(value)


@cache
def taint_version(language: str) -> str:
    """The digest of the language's taint vocabulary and of the analysis that reads it (bumped when it
    changes)."""
    return digest_files([RULESET / "taint" / f"{_vocabulary_file(language)}.toml"], "taint-14")


@dataclass
class Summary:
    """What a same-file function does with its parameters: which reach its return, which reach a sink."""

    returns: set[int] = field(default_factory=set)
    sinks: dict[int, set[tuple[str, str, str | None]]] = field(default_factory=dict)


LITERALS = frozenset(
    {
        "string_literal",
        "character_literal",
        "decimal_integer_literal",
        "hex_integer_literal",
        "octal_integer_literal",
        "binary_integer_literal",
        "decimal_floating_point_literal",
        "true",
        "false",
        "null_literal",
        "class_literal",
        "this",
        "integer",
        "float",
        "none",
        "ellipsis",
    }
)
SKIP = frozenset(
    {
        "lambda_expression",
        "method_reference",
        "class_body",
        "class_declaration",
        "lambda",
        "function_definition",
        "class_definition",
        "decorated_definition",
        "comment",
        "line_comment",
        "block_comment",
        "arrow_function",
        "function_expression",
        "function",
        "function_declaration",
        "generator_function",
        "generator_function_declaration",
        "method_definition",
        "class",
    }
)


def node_text(node: Node | None) -> str:
    return re.sub(r"\s+", "", (node.text or b"").decode("utf-8", "replace")) if node is not None else ""


def simple_type(node: Node | None) -> str:
    text = re.sub(r"<.*", "", node_text(node))
    return text.rsplit(".", 1)[-1]

"""Deterministic wrapper-role inference from the language-level vocabulary in ``ruleset/semantic/``.

A function whose parameter reaches (through its local assignments) the data argument of a call in the
role set becomes a wrapper of that role, one level deeper; derivation runs over every function of the
repository to depth 3. Calls resolve by the called name, as the call graph does.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from ouroboros_gates.decider.instruments.base import RULESET, digest_files
from ouroboros_gates.decider.instruments.rules import Priors, RulesetError, prior_active
from ouroboros_gates.decider.languages import Call, Function, ParsedFile

__all__ = [
    "MAX_DEPTH",
    "FunctionRoles",
    "RoleEntry",
    "RoleIndex",
    "RoleUse",
    "infer_roles",
    "roles_version",
    "vocabulary",
]

MAX_DEPTH = 3
RoleKind = Literal["sink", "sanitizer", "source"]
_KINDS: tuple[RoleKind, ...] = ("sink", "sanitizer", "source")
_CHAIN: dict[str, tuple[str, ...]] = {"typescript": ("javascript", "typescript"), "cpp": ("c", "cpp")}


@dataclass(frozen=True)
class RoleEntry:
    """A vocabulary entry: a role, its operation, the calls or tokens that name it, and its data argument."""

    id: str
    kind: RoleKind
    operation: str
    calls: tuple[str, ...]
    arg: int
    confidence: float
    tag: str | None
    depth: int = 0
    unless: tuple[str, ...] = ()  # callees that share a name with the entry's calls and are not it

    def matches(self, call: Call) -> bool:
        """Whether a call names this entry (dotted entries match the callee's end, others its name), unless
        it is one of ``unless`` (``re.compile`` is no ``compile``)."""
        if call.callee in self.unless:
            return False
        return any(_names(name, call) for name in self.calls)


def _names(name: str, call: Call) -> bool:
    """Whether an entry's name names a call: a dotted name the callee's end, another the call's name."""
    if "." in name:
        return call.callee == name or call.callee.endswith("." + name)
    return call.name == name


@dataclass(frozen=True)
class RoleUse:
    """A call in a function that reaches a role, at some depth and from some origin."""

    kind: RoleKind
    operation: str
    line: int
    depth: int
    origin: Literal["language", "inferred_wrapper", "prior"]
    confidence: float
    nonconstant: bool
    param_reaches: bool
    entry: str
    tag: str | None = None  # the framework or library the entry (or the role it wraps) depends on


@dataclass
class FunctionRoles:
    """What a function does with roles: the role calls it makes, its sources, what it wraps."""

    uses: list[RoleUse] = field(default_factory=list)
    sources: set[str] = field(default_factory=set)
    wraps: dict[tuple[str, str], int] = field(default_factory=dict)

    def describe(self) -> tuple[str, ...]:
        """``kind:operation:origin:depth`` lines, plus ``source:<kind>`` and ``wrapper:<kind>:<op>:<d>``."""
        lines = {f"{u.kind}:{u.operation}:{u.origin}:{u.depth}" for u in self.uses}
        lines |= {f"source:{kind}" for kind in self.sources}
        lines |= {f"wrapper:{kind}:{op}:{depth}" for (kind, op), depth in self.wraps.items()}
        return tuple(sorted(lines))


RoleIndex = dict[tuple[str, str], FunctionRoles]
"""Roles per ``(path, function)``."""


def _files(language: str) -> list[str]:
    return [
        name for name in _CHAIN.get(language, (language,)) if (RULESET / "semantic" / f"{name}.toml").exists()
    ]


@cache
def roles_version(language: str) -> str:
    """The digest of the vocabulary files a language reads."""
    return digest_files([RULESET / "semantic" / f"{name}.toml" for name in _files(language)], "roles-2")


@cache
def _entries(language: str) -> tuple[RoleEntry, ...]:
    found: list[RoleEntry] = []
    for name in _files(language):
        raw = tomllib.loads((RULESET / "semantic" / f"{name}.toml").read_text(encoding="utf-8"))
        for kind in _KINDS:
            found.extend(_entry(entry, kind, name) for entry in raw.get(kind, []))
    return tuple(found)


def _entry(entry: dict[str, Any], kind: RoleKind, name: str) -> RoleEntry:
    """One vocabulary entry of ``semantic/<name>.toml`` (a ``RulesetError`` naming it when malformed)."""
    _require_table(entry, kind, name)
    try:
        tag = entry.get("framework", entry.get("library"))
        return RoleEntry(
            id=str(entry["id"]),
            kind=kind,
            operation=str(entry.get("operation", entry.get("kind", "other"))),
            calls=tuple(entry.get("calls", entry.get("tokens", []))),
            arg=int(entry.get("arg", -1)),
            confidence=float(entry.get("confidence", 0.5)),
            tag=str(tag) if tag is not None else None,
            unless=tuple(str(u) for u in entry.get("unless", [])),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise RulesetError(f"semantic/{name}.toml: {kind} {entry.get('id')!r}: {exc}") from exc


def _require_table(entry: object, kind: RoleKind, name: str) -> None:
    if not isinstance(entry, dict):
        raise RulesetError(f"semantic/{name}.toml: {kind} {entry!r}: expected a table ([[{kind}]])")


def vocabulary(language: str, priors: Priors = "off") -> tuple[RoleEntry, ...]:
    """The language's entries, priors included only when switched on (empty: no coverage)."""
    return tuple(entry for entry in _entries(language) if prior_active(entry.tag, priors))


def tainted(function: Function) -> frozenset[str]:
    """Parameters and the locals assigned from them (three passes over the assignments)."""
    seen = set(function.params)
    for _ in range(3):
        for targets, reads in function.assignments:
            if reads & seen:
                seen |= targets
    return frozenset(seen)


def infer_roles(parsed: Mapping[str, ParsedFile], priors: Priors = "off") -> RoleIndex:
    """Roles of every function of every file: derive wrappers to depth 3, then record each role call."""
    index: RoleIndex = {}
    for language, items in _by_language(parsed).items():
        base = vocabulary(language, priors)
        if base:
            index.update(_language_roles(items, base))
    return index


def _by_language(parsed: Mapping[str, ParsedFile]) -> dict[str, list[ParsedFile]]:
    """The parsed files grouped by language, in their order."""
    by_language: dict[str, list[ParsedFile]] = {}
    for item in parsed.values():
        by_language.setdefault(item.language, []).append(item)
    return by_language


def _language_roles(items: list[ParsedFile], base: tuple[RoleEntry, ...]) -> RoleIndex:
    """Roles of every function of one language's files under its vocabulary ``base``."""
    calls, sources = _calls_and_sources(base)
    by_name = _by_name([*calls, *_derive(items, calls)])
    return {
        (item.path, function.name): _uses(item, function, by_name, sources)
        for item in items
        for function in item.functions
    }


def _calls_and_sources(base: tuple[RoleEntry, ...]) -> tuple[list[RoleEntry], list[RoleEntry]]:
    """The entries named by calls (sinks and sanitizers), and the sources (named by tokens in the text)."""
    calls = [entry for entry in base if entry.kind != "source"]
    sources = [entry for entry in base if entry.kind == "source"]
    return calls, sources


def _by_name(entries: Iterable[RoleEntry]) -> dict[str, list[RoleEntry]]:
    """Entries by the last segment of each name they match, so a call looks up only its own name."""
    index: dict[str, list[RoleEntry]] = {}
    for entry in entries:
        for name in dict.fromkeys(call.rsplit(".", 1)[-1] for call in entry.calls):
            index.setdefault(name, []).append(entry)
    return index


def _wrapped(
    function: Function,
    frontier: Mapping[str, list[RoleEntry]],
    known: dict[tuple[str, str, str], RoleEntry],
    depth: int,
) -> Iterator[RoleEntry]:
    """The entries ``function`` wraps at ``depth``: a call of a frontier entry its parameters reach, not
    known for it already (each recorded in ``known`` as it is found)."""
    simple = function.simple
    for entry in _reached(function, frontier):
        key = (simple, entry.kind, entry.operation)
        if key not in known:
            wrapper = _wrapper(entry, simple, depth)
            known[key] = wrapper
            yield wrapper


def _reached(function: Function, frontier: Mapping[str, list[RoleEntry]]) -> Iterator[RoleEntry]:
    """The frontier entries ``function`` calls with what its parameters reach in the data argument."""
    reach = tainted(function)
    for call in function.calls:
        for entry in frontier.get(call.name, ()):
            if entry.matches(call) and _reaches(call, entry, reach):
                yield entry


def _reaches(call: Call, entry: RoleEntry, reach: frozenset[str]) -> bool:
    """Whether what the parameters reach is read by the entry's data argument at this call."""
    return bool(call.reads(entry.arg) & reach)


def _wrapper(entry: RoleEntry, simple: str, depth: int) -> RoleEntry:
    """The entry of a function (by its simple name) that wraps ``entry`` at ``depth``."""
    return RoleEntry(
        id=f"wrapper.{entry.kind}.{entry.operation}.{depth}",
        kind=entry.kind,
        operation=entry.operation,
        calls=(simple,),
        arg=-1,
        confidence=entry.confidence,
        tag=entry.tag,
        depth=depth,
    )


def _derive(items: Iterable[ParsedFile], seeds: list[RoleEntry]) -> list[RoleEntry]:
    """Wrapper entries by function name, each at the least depth it is reached."""
    known: dict[tuple[str, str, str], RoleEntry] = {}
    frontier = _by_name(seeds)
    functions = _declared(items)
    for depth in range(1, MAX_DEPTH + 1):
        frontier = _by_name(_wrappers_at(functions, frontier, known, depth))
        if not frontier:
            break
    return list(known.values())


def _declared(items: Iterable[ParsedFile]) -> list[Function]:
    """The functions of the files, the code outside any function left out."""
    return [f for item in items for f in item.functions if not f.is_global]


def _wrappers_at(
    functions: list[Function],
    frontier: Mapping[str, list[RoleEntry]],
    known: dict[tuple[str, str, str], RoleEntry],
    depth: int,
) -> list[RoleEntry]:
    """The wrappers found at ``depth``, function by function (each also recorded in ``known``)."""
    return [wrapper for function in functions for wrapper in _wrapped(function, frontier, known, depth)]


def _use(entry: RoleEntry, call: Call, reach: frozenset[str]) -> RoleUse:
    """A call of a role entry: where, how deep a wrapper, where the entry comes from, what reaches it."""
    return RoleUse(
        kind=entry.kind,
        operation=entry.operation,
        line=call.line,
        depth=entry.depth,
        origin="inferred_wrapper" if entry.depth else ("prior" if entry.tag else "language"),
        confidence=entry.confidence,
        nonconstant=not call.constant_at(entry.arg),
        param_reaches=_reaches(call, entry, reach),
        entry=entry.id,
        tag=entry.tag,
    )


def _call_uses(function: Function, index: dict[str, list[RoleEntry]]) -> Iterator[RoleUse]:
    """Each call of the function that is a role entry's (a wrapper calling its own name is recursion)."""
    reach = tainted(function)
    simple = function.simple
    for call in function.calls:
        for entry in _called(call, index, simple):
            yield _use(entry, call, reach)


def _called(call: Call, index: dict[str, list[RoleEntry]], simple: str) -> Iterator[RoleEntry]:
    """The role entries a call in the function ``simple`` is of; its own wrapper entry called by its own
    name is recursion, not a wrapper use."""
    for entry in index.get(call.name, ()):
        if entry.matches(call) and not (_own_wrapper(entry, simple) and call.name == simple):
            yield entry


def _own_wrapper(entry: RoleEntry, simple: str) -> bool:
    """Whether ``entry`` is a wrapper entry derived from the function named ``simple`` itself."""
    return bool(entry.depth) and entry.calls == (simple,)


def _uses(
    item: ParsedFile, function: Function, index: dict[str, list[RoleEntry]], sources: list[RoleEntry]
) -> FunctionRoles:
    roles = FunctionRoles()
    roles.uses.extend(_call_uses(function, index))
    text = item.source_of(function) if not function.is_global else ""
    roles.sources.update(_sources_named(text, sources))
    roles.wraps.update(_wraps(function.simple, index))
    return roles


def _sources_named(text: str, sources: list[RoleEntry]) -> set[str]:
    """The operations of the source entries one of whose tokens the function's text names."""
    return {entry.operation for entry in sources if any(token in text for token in entry.calls)}


def _wraps(simple: str, index: dict[str, list[RoleEntry]]) -> dict[tuple[str, str], int]:
    """What the function ``simple`` wraps: (kind, operation) -> the least depth of its wrapper entries."""
    wraps: dict[tuple[str, str], int] = {}
    for entry in index.get(simple, ()):
        if _own_wrapper(entry, simple):
            key = (entry.kind, entry.operation)
            wraps[key] = min(wraps.get(key, entry.depth), entry.depth)
    return wraps

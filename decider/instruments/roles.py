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
from typing import Literal

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
        for name in self.calls:
            if "." in name:
                if call.callee == name or call.callee.endswith("." + name):
                    return True
            elif call.name == name:
                return True
        return False


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
            for entry in raw.get(kind, []):
                try:
                    tag = entry.get("framework", entry.get("library"))
                    found.append(
                        RoleEntry(
                            id=str(entry["id"]),
                            kind=kind,
                            operation=str(entry.get("operation", entry.get("kind", "other"))),
                            calls=tuple(entry.get("calls", entry.get("tokens", []))),
                            arg=int(entry.get("arg", -1)),
                            confidence=float(entry.get("confidence", 0.5)),
                            tag=str(tag) if tag is not None else None,
                            unless=tuple(str(u) for u in entry.get("unless", [])),
                        )
                    )
                except (KeyError, TypeError, ValueError) as exc:
                    raise RulesetError(f"semantic/{name}.toml: {kind} {entry.get('id')!r}: {exc}") from exc
    return tuple(found)


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
    by_language: dict[str, list[ParsedFile]] = {}
    for item in parsed.values():
        by_language.setdefault(item.language, []).append(item)
    for language, items in by_language.items():
        base = vocabulary(language, priors)
        if not base:
            continue
        calls = [entry for entry in base if entry.kind != "source"]
        by_name = _by_name([*calls, *_derive(items, calls)])
        sources = [entry for entry in base if entry.kind == "source"]
        for item in items:
            for function in item.functions:
                index[(item.path, function.name)] = _uses(item, function, by_name, sources)
    return index


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
    reach = tainted(function)
    simple = function.simple
    for call in function.calls:
        for entry in frontier.get(call.name, ()):
            key = (simple, entry.kind, entry.operation)
            if key in known or not entry.matches(call) or not (call.reads(entry.arg) & reach):
                continue
            wrapper = RoleEntry(
                id=f"wrapper.{entry.kind}.{entry.operation}.{depth}",
                kind=entry.kind,
                operation=entry.operation,
                calls=(simple,),
                arg=-1,
                confidence=entry.confidence,
                tag=entry.tag,
                depth=depth,
            )
            known[key] = wrapper
            yield wrapper


def _derive(items: Iterable[ParsedFile], seeds: list[RoleEntry]) -> list[RoleEntry]:
    """Wrapper entries by function name, each at the least depth it is reached."""
    known: dict[tuple[str, str, str], RoleEntry] = {}
    frontier = _by_name(seeds)
    functions = [f for item in items for f in item.functions if not f.is_global]
    for depth in range(1, MAX_DEPTH + 1):
        found: list[RoleEntry] = []
        for function in functions:
            found.extend(_wrapped(function, frontier, known, depth))
        frontier = _by_name(found)
        if not frontier:
            break
    return list(known.values())


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
        param_reaches=bool(call.reads(entry.arg) & reach),
        entry=entry.id,
        tag=entry.tag,
    )


def _call_uses(function: Function, index: dict[str, list[RoleEntry]]) -> Iterator[RoleUse]:
    """Each call of the function that is a role entry's (a wrapper calling its own name is recursion)."""
    reach = tainted(function)
    simple = function.simple
    for call in function.calls:
        for entry in index.get(call.name, ()):
            if not entry.matches(call):
                continue
            if entry.depth and entry.calls == (simple,) and call.name == simple:
                continue  # a function calling its own name is recursion, not a wrapper use
            yield _use(entry, call, reach)


def _uses(
    item: ParsedFile, function: Function, index: dict[str, list[RoleEntry]], sources: list[RoleEntry]
) -> FunctionRoles:
    roles = FunctionRoles()
    simple = function.simple
    roles.uses.extend(_call_uses(function, index))
    text = item.source_of(function) if not function.is_global else ""
    roles.sources.update(entry.operation for entry in sources if any(token in text for token in entry.calls))
    for entry in index.get(simple, ()):
        if entry.depth and entry.calls == (simple,):
            key = (entry.kind, entry.operation)
            roles.wraps[key] = min(roles.wraps.get(key, entry.depth), entry.depth)
    return roles

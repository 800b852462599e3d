"""Repository facts from a tree-sitter call graph: callers, caller files, distance to an entry point.

Calls resolve by the called name, so the graph is the same whatever the functions are called. An entry
point is ``<global>``, a decorated function (registered with a framework) or a function nothing in the
repository calls.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from ouroboros_gates.decider.languages import Function, ParsedFile, simple_name

__all__ = ["CallGraph", "FunctionFacts", "build_call_graph"]

MAX_DISTANCE = 6


@dataclass(frozen=True)
class FunctionFacts:
    """The facts of one function."""

    callers: int
    caller_files: int
    entry_distance: int
    is_global: bool
    function_lines: int
    params: int
    decorated: bool


@dataclass(frozen=True)
class CallGraph:
    """Call sites by called name: who calls a function, from which file and which function."""

    sites: Mapping[str, tuple[tuple[str, str], ...]]
    decorated: frozenset[tuple[str, str]]

    def callers_of(self, path: str, function: Function) -> tuple[tuple[str, str], ...]:
        """Call sites ``(path, calling function)`` of a function, its own recursion left out."""
        return tuple(self._callers(path, function.name))

    def facts(self, path: str, function: Function) -> FunctionFacts:
        """Callers, caller files, entry distance and shape of one function."""
        callers = self.callers_of(path, function)
        return FunctionFacts(
            callers=len(callers),
            caller_files=len({file for file, _ in callers}),
            entry_distance=self._distance(path, function),
            is_global=function.is_global,
            function_lines=function.end_line - function.start_line + 1,
            params=len(function.params),
            decorated=function.decorated,
        )

    def _callers(self, file: str, name: str) -> list[tuple[str, str]]:
        """The functions that call ``name`` (by its simple name), itself left out; none for the top level."""
        if name == "<global>":
            return []
        return [s for s in self.sites.get(simple_name(name), ()) if s != (file, name)]

    def _distance(self, path: str, function: Function) -> int:
        """Hops up the callers to the nearest entry point (at most ``MAX_DISTANCE``), breadth first."""
        search = _Search.starting_at((path, function.name))
        while search.queue:
            (file, name), hops = search.queue.popleft()
            sites = self._callers(file, name)
            if not sites or (file, name) in self.decorated:  # nothing calls it, or a framework does
                return min(hops, MAX_DISTANCE)
            if hops >= MAX_DISTANCE:
                break
            search.push(sites, hops + 1)
        return MAX_DISTANCE


@dataclass
class _Search:
    """A breadth-first search up the callers: the call sites queued with their hops, each queued once."""

    queue: deque[tuple[tuple[str, str], int]]
    seen: set[tuple[str, str]]

    @classmethod
    def starting_at(cls, start: tuple[str, str]) -> _Search:
        return cls(deque([(start, 0)]), {start})

    def push(self, sites: list[tuple[str, str]], hops: int) -> None:
        """Queue the sites not queued before, ``hops`` away."""
        for site in sites:
            if site not in self.seen:
                self.seen.add(site)
                self.queue.append((site, hops))


def build_call_graph(parsed: Mapping[str, ParsedFile]) -> CallGraph:
    """Index every call site of every parsed file by the called name."""
    sites = _call_sites(parsed)
    return CallGraph(sites={k: tuple(v) for k, v in sites.items()}, decorated=_decorated(parsed))


def _decorated(parsed: Mapping[str, ParsedFile]) -> frozenset[tuple[str, str]]:
    """``(path, function)`` of every decorated function (registered with a framework: an entry point)."""
    return frozenset(
        (path, function.name)
        for path, item in parsed.items()
        for function in item.functions
        if function.decorated
    )


def _call_sites(parsed: Mapping[str, ParsedFile]) -> dict[str, list[tuple[str, str]]]:
    """``(path, calling function)`` of every call, by the called name, in the order of the files."""
    sites: dict[str, list[tuple[str, str]]] = {}
    for path, item in parsed.items():
        for function in item.functions:
            for call in function.calls:
                sites.setdefault(call.name, []).append((path, function.name))
    return sites

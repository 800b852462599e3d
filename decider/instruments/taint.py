"""Which external input reaches which sensitive sink, inside one function, through its statements.

An intra-procedural, statement-ordered taint tracker over the tree-sitter tree (Java, JavaScript and
TypeScript, PHP and Python; C and C++ go through the memory step of ``_memory_tracker``): a
function's parameters and the vocabulary's sources (request parameters, headers, cookies, files, the
environment, stdin) taint what they are assigned to; assignments, string building, containers filled with
``add``/``put``/``append`` and calls carry taint on; a plain reassignment clears it (inside a branch, a
loop body or a case, for the rest of that arm: when the arm ends the name also keeps what it held before, as
it does when the arm does not run); a sanitiser clears it for its operations only. An argument vector (a list,
tuple or array made in place, or a local bound to one in this function and not rebound since) given to a sink
that takes one (``argv_safe``: ``subprocess.run(cmd)``) is no command string. A call to a function of the same
file goes through that function's summary (which parameters reach its return value, and which reach a sink in
it), so a wrapper the roles step would infer is followed. The code of a PHP, Python, JavaScript or TypeScript
file outside its functions and classes is walked too, as one more function (``GLOBAL``): a script's
``sys.argv[1]`` or ``process.argv[2]`` reaching a shell at top level is a flow. Every flow says which source
reached which sink at which lines. The vocabulary is data: ``ruleset/taint/<language>.toml``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from tree_sitter import Node

from ouroboros_gates.decider._syntax import simple_name
from ouroboros_gates.decider.instruments._memory_tracker import memory_flows
from ouroboros_gates.decider.instruments._taint_java import JavaTracker
from ouroboros_gates.decider.instruments._taint_javascript import JavaScriptTracker, pattern_names
from ouroboros_gates.decider.instruments._taint_model import (
    CONSTANT,
    PARAMETER,
    TAINT_LANGUAGES,
    Entry,
    Flow,
    Summary,
    Taint,
    TaintVocabulary,
    node_text,
    taint_version,
    vocabulary_of,
)
from ouroboros_gates.decider.instruments._taint_php import PhpTracker, php_parameter
from ouroboros_gates.decider.instruments._taint_python import PythonTracker
from ouroboros_gates.decider.instruments._taint_routes import route_entries
from ouroboros_gates.decider.instruments._taint_tracker import Tracker

__all__ = [
    "CONSTANT",
    "PARAMETER",
    "TAINT_LANGUAGES",
    "Flow",
    "Taint",
    "TaintVocabulary",
    "find_flows",
    "taint_version",
    "vocabulary_of",
]

TOP_LEVEL = frozenset({"module", "program"})
"""The root node types a file's top-level code is walked from (Python's ``module``; JavaScript's and PHP's
``program``)."""

_SCRIPT = ("javascript", "typescript")
_TRACKERS: dict[str, type[Tracker]] = {
    "java": JavaTracker,
    "javascript": JavaScriptTracker,
    "php": PhpTracker,
    "python": PythonTracker,
    "typescript": JavaScriptTracker,
}
"""The walk of each language the taint step follows flows in (C and C++: the memory step)."""


def _param_name(child: Node, language: str) -> list[str]:
    return _PARAMETER_NAMES.get(language, _python_param)(child)


def _java_param(child: Node) -> list[str]:
    named = child.child_by_field_name("name")
    if named is None and child.type == "spread_parameter":
        named = _spread_name(child)
    return [node_text(named)] if named is not None else []


def _spread_name(child: Node) -> Node | None:
    """``String... args``: the name its declarator binds."""
    return next(
        (c.child_by_field_name("name") for c in child.named_children if c.type == "variable_declarator"), None
    )


def _python_param(child: Node) -> list[str]:
    names = _PYTHON_PARAMETERS.get(child.type)
    return names(child) if names is not None else []


def _plain_param(child: Node) -> list[str]:
    return [node_text(child)]


def _annotated_param(child: Node) -> list[str]:
    """``x: int``, ``x=1``, ``x: int = 1``: the name (its field, else its first identifier)."""
    named = child.child_by_field_name("name") or next(
        (c for c in child.named_children if c.type == "identifier"), None
    )
    return [node_text(named)] if named is not None else []


def _splat_param(child: Node) -> list[str]:
    """``*args``, ``**kwargs``."""
    return [node_text(c) for c in child.named_children if c.type == "identifier"]


_PYTHON_PARAMETERS: dict[str, Callable[[Node], list[str]]] = {
    "identifier": _plain_param,
    **dict.fromkeys(("typed_parameter", "default_parameter", "typed_default_parameter"), _annotated_param),
    **dict.fromkeys(("list_splat_pattern", "dictionary_splat_pattern"), _splat_param),
}
"""The names each kind of Python parameter binds."""


_PARAMETER_NAMES: dict[str, Callable[[Node], list[str]]] = {
    "java": _java_param,
    "javascript": pattern_names,
    "php": php_parameter,
    "typescript": pattern_names,
}
"""The names one parameter node binds, per language (Python's when not named here)."""


def _params_in_order(node: Node, language: str) -> list[str]:
    """A declaration's parameter names in order (Python's ``self``/``cls`` left out)."""
    params = node.child_by_field_name("parameters")
    if params is None and language in _SCRIPT:  # ``x => ...``: one parameter, no parentheses
        return pattern_names(node.child_by_field_name("parameter"))
    names = _param_names(params, language)
    return _without_receiver(names) if language == "python" else names


def _param_names(params: Node | None, language: str) -> list[str]:
    """The names a parameter list binds, in order."""
    return [
        name for child in (params.named_children if params else []) for name in _param_name(child, language)
    ]


def _without_receiver(names: list[str]) -> list[str]:
    """A Python function's parameters without a method's ``self`` or ``cls``."""
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def _run(
    tracker: Tracker, node: Node, params: Iterable[str], routes: Sequence[tuple[Entry, bool]] = ()
) -> Tracker:
    """Walk one function (or a file's top level) with its parameters as sources: a route's are request data
    under its frameworks' priors (a first parameter a route names, the request object itself, stays a
    parameter); what a route returns is the page when it makes one (``routes``: each entry, and whether its
    return is HTML)."""
    _bind(tracker, params, routes, node.start_point.row + 1)
    tracker.page = _tags(route for route, html in routes if html)
    if node.type in TOP_LEVEL:  # a script's top-level code (function and class bodies are skipped in it)
        tracker.children(node)
    else:
        tracker.stmt(node.child_by_field_name("body"))
    return tracker


def _bind(tracker: Tracker, params: Iterable[str], routes: Sequence[tuple[Entry, bool]], line: int) -> None:
    """A route's parameters are request data (but a first parameter a route names); others are parameters."""
    tags = _tags(route for route, _ in routes)
    skip_first = any(route.first_param for route, _ in routes)
    for i, param in enumerate(params):
        if routes and not (skip_first and i == 0):
            tracker.env[param] = Taint("request", line, tag=tags, route=True, what=param)
        else:
            tracker.env[param] = Taint(PARAMETER, line, what=param)


def _tags(entries: Iterable[Entry]) -> str | None:
    """The frameworks' tags of some entries, sorted and joined with ``|`` (None: no tag)."""
    return "|".join(sorted({t for entry in entries for t in entry.priors()})) or None


def _defined(declared: list[tuple[str, Node]], every: bool) -> frozenset[str]:
    """The names a bare call in this file can mean one of its own functions by: in Java and PHP (``every``)
    every function and method of the file; in Python a module's functions and functions nested in
    functions, not a class's methods."""
    qualified = {name.split("#", 1)[0] for name, _ in declared}
    return frozenset(simple_name(name) for name in qualified if every or _module_level(name, qualified))


def _module_level(name: str, qualified: set[str]) -> bool:
    """A module's function, or a function nested in one of the file's functions (not a class's method)."""
    return "." not in name or name.rsplit(".", 1)[0] in qualified


def _summaries(
    language: str,
    vocab: TaintVocabulary,
    declared: list[tuple[str, Node]],
    defined: frozenset[str],
    imported: dict[str, str],
) -> dict[str, Summary]:
    """Per simple name: which parameters reach the return value and which reach a sink (two rounds, so a
    helper calling a helper is followed)."""
    summaries: dict[str, Summary] = {}
    for _ in range(2):
        fresh: dict[str, Summary] = {}
        for name, node in declared:
            summary = fresh.setdefault(simple_name(name), Summary())
            for index, param in enumerate(_params_in_order(node, language)):
                tracker = _run(_TRACKERS[language](vocab, summaries, name, defined, imported), node, [param])
                _summarise(summary, index, tracker)
        summaries = fresh
    return summaries


def _summarise(summary: Summary, index: int, tracker: Tracker) -> None:
    """What the walk with parameter ``index`` as the only source found: whether it is returned, and the
    sinks it reaches unsanitised."""
    if _returns_parameter(tracker.returns):
        summary.returns.add(index)
    for flow in tracker.flows:
        if flow.source_kind == PARAMETER and not flow.sanitized:
            summary.sinks.setdefault(index, set()).add(_summary_sink(flow))


def _summary_sink(flow: Flow) -> tuple[str, str, str | None]:
    """A sink as a summary keeps it: its operation, its id and the first prior the flow depends on."""
    return flow.operation, flow.sink, flow.tags[0] if flow.tags else None


def _returns_parameter(returned: Taint | None) -> bool:
    """Whether what a walk returned is its parameter, with no sanitiser on the way."""
    return returned is not None and returned.kind == PARAMETER and returned.reaches("")


def _imported(declared: list[tuple[str, Node]], language: str) -> dict[str, str]:
    """Python's names taken from a module (``from os import remove``, ``from .wrappers import Request as R``):
    the module a bare call of each names, which the vocabulary's receivers are matched against (a ``Request``
    of the package's own is not urllib's). Empty for a function cut out of its file, or another language."""
    if language != "python" or not declared:
        return {}
    found: dict[str, str] = {}
    for node in _from_imports(_root(declared[0][1])):
        module = node_text(node.child_by_field_name("module_name"))
        for name in node.children_by_field_name("name"):
            found[node_text(_bound(name))] = module
    return found


def _root(node: Node) -> Node:
    """The root of the tree a node is in (its file's module)."""
    while node.parent is not None:
        node = node.parent
    return node


def _bound(name: Node) -> Node | None:
    """The name an imported name is bound to here (``Request as R``: ``R``)."""
    if name.type != "aliased_import":
        return name
    return name.child_by_field_name("alias") or name.child_by_field_name("name")


def _from_imports(node: Node) -> Iterator[Node]:
    """The ``from … import …`` statements of a module, in blocks (``try``/``if``) too, not inside
    functions."""
    for child in node.named_children:
        if child.type == "import_from_statement":
            yield child
        elif child.type not in ("function_definition", "class_definition", "decorated_definition"):
            yield from _from_imports(child)


def find_flows(language: str, functions: Iterable[tuple[str, Node]]) -> tuple[Flow, ...]:
    """Every flow in the given functions (qualified name, declaration node) of one file; a root node among
    them (a ``program``, Python's ``module``) is the file's top-level code."""
    vocab = vocabulary_of(language)
    if vocab is None:
        return ()
    if language in ("c", "cpp"):
        return memory_flows(vocab, functions)
    declared, scripts = _declared_and_scripts(list(functions))
    return tuple(_walked(language, vocab, declared, [*declared, *scripts]))


def _declared_and_scripts(
    functions: list[tuple[str, Node]],
) -> tuple[list[tuple[str, Node]], list[tuple[str, Node]]]:
    """The functions with a body, and the files' top-level code, among ``functions``."""
    declared = [(name, node) for name, node in functions if node.child_by_field_name("body") is not None]
    scripts = [(name, node) for name, node in functions if node.type in TOP_LEVEL]
    return declared, scripts


def _walked(
    language: str, vocab: TaintVocabulary, declared: list[tuple[str, Node]], walked: list[tuple[str, Node]]
) -> Iterator[Flow]:
    """The flows of each walked function (the declared ones and the top-level code), through the declared
    functions' summaries."""
    defined = _defined(declared, language in ("java", "php"))
    imported = _imported(walked, language)
    summaries = _summaries(language, vocab, declared, defined, imported)
    external = {sink.id for sink in vocab.sinks if sink.external}
    for name, node in walked:
        walk = _TRACKERS[language](vocab, summaries, name, defined, imported)
        params = _params_in_order(node, language)
        tracker = _run(walk, node, params, route_entries(vocab, node, params))
        yield from _kept(tracker.flows, external)


def _kept(found: Iterable[Flow], external: set[str]) -> Iterator[Flow]:
    """One function's flows, each once, but none from a parameter to a sink that takes external input
    only."""
    seen: set[tuple[object, ...]] = set()
    for flow in found:
        if flow.sink in external and flow.source_kind == PARAMETER:
            continue  # a sink of everyday code (a pattern, a log line): request data only, no parameter
        key = (flow.operation, flow.sink_line, flow.source_kind, flow.source_line, flow.sanitized, flow.tags)
        if key not in seen:
            seen.add(key)
            yield flow

"""The taint step for C and C++: which parameter-derived value reaches a memory operation in one function,
and whether a test on it comes first.

A function's parameters taint the locals assigned from them (assignments and initialisers, to a fixed
point, so the order of statements is not followed). A flow is a tainted value reaching an array index or
the offset of a dereferenced pointer sum (``memory_index``), an argument of a copy, a read into a buffer
or a format (``memory_copy``), the size of an allocation (``memory_alloc``), or a ``free``/``delete``
(``memory_free``); a local assigned from a call's result and dereferenced (``->``, ``*``, an index) with
no test of it before (``memory_deref``, source ``other``) is a flow too. An index, copy or allocation
flow is sanitised when one of its tainted names is compared by size (``<``, ``<=``, ``>``, ``>=`` in an
``if``/``while``/``for`` condition, a conditional expression or an assertion) at or before the line of the
operation; a dereference needs any test of the pointer first (a null check); a freed pointer is sanitised
when it is set to a null value after the free. The call names are data: ``ruleset/taint/c.toml`` (C++ reads it too).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from tree_sitter import Node

from decider.instruments._taint_model import PARAMETER, Flow, TaintVocabulary, node_text

__all__ = ["memory_flows"]

_TESTS = frozenset(
    {"if_statement", "while_statement", "do_statement", "for_statement", "conditional_expression"}
)  # fmt: skip
_NULLS = frozenset({"NULL", "nullptr", "0"})
_RELATIONAL = frozenset({"<", "<=", ">", ">="})
_IDENTIFIERS = frozenset({"identifier"})


def _identifiers(node: Node | None) -> Iterator[Node]:
    if node is None:
        return
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "call_expression":  # a call's name is not a value it reads
            arguments = current.child_by_field_name("arguments")
            stack.extend([arguments] if arguments is not None else [])
        elif current.type in _IDENTIFIERS:
            yield current
        elif current.type != "field_identifier":
            stack.extend(current.children)


def _names(node: Node | None) -> set[str]:
    return {node_text(n) for n in _identifiers(node)}


def _declared(node: Node | None) -> str | None:
    """The name a declarator declares (through pointers, references, arrays and initialisers)."""
    while node is not None and node.type not in ("identifier", "field_identifier"):
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in node.named_children if c.type.endswith("declarator") or c.type == "identifier"),
                         None)  # fmt: skip
        node = inner
    return node_text(node) if node is not None else None


def _params(function: Node) -> list[str]:
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    params = declarator.child_by_field_name("parameters") if declarator is not None else None
    names = (_declared(p.child_by_field_name("declarator")) for p in (params.named_children if params else [])
             if p.type in ("parameter_declaration", "optional_parameter_declaration"))  # fmt: skip
    return [name for name in names if name]


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _assignments(body: Node) -> list[tuple[str, Node, int]]:
    """(target name, value expression, line) of every assignment and initialiser in the body."""
    out = []
    for node in _walk(body):
        if node.type == "init_declarator":
            target, value = _declared(node.child_by_field_name("declarator")), node.child_by_field_name("value")
        elif node.type == "assignment_expression":
            left = node.child_by_field_name("left")
            target = node_text(left) if left is not None and left.type == "identifier" else None
            value = node.child_by_field_name("right")
        else:
            continue
        if target and value is not None:
            out.append((target, value, node.start_point.row + 1))
    return out


def _tainted(params: Iterable[str], assignments: list[tuple[str, Node, int]]) -> set[str]:
    tainted = set(params)
    changed = True
    while changed:
        changed = False
        for target, value, _ in assignments:
            if target not in tainted and _names(value) & tainted:
                tainted.add(target)
                changed = True
    return tainted


def _bounded(condition: Node) -> set[str]:
    """Names an operand of a relational comparison (``<``, ``<=``, ``>``, ``>=``) in a condition reads."""
    found: set[str] = set()
    for node in _walk(condition):
        if node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) in _RELATIONAL:
            found |= _names(node)
    return found


def _tests(body: Node) -> list[tuple[int, set[str], set[str]]]:
    """(line, names tested, names compared by size) of every condition and assertion-like call."""
    out = []
    for node in _walk(body):
        condition = None
        if node.type in _TESTS:
            condition = node.child_by_field_name("condition")
        elif node.type == "call_expression" and "assert" in node_text(node.child_by_field_name("function")).lower():
            condition = node.child_by_field_name("arguments")
        if condition is not None:
            out.append((node.start_point.row + 1, _names(condition), _bounded(condition)))
    return out


def _callee(node: Node) -> str:
    return node_text(node.child_by_field_name("function")).rsplit("::", 1)[-1].rsplit(".", 1)[-1].rsplit("->", 1)[-1]


class _Function:
    """One function's memory flows."""

    def __init__(self, name: str, node: Node, vocab: TaintVocabulary) -> None:
        self.name, self.vocab = name, vocab
        self.start = node.start_point.row + 1
        body = node.child_by_field_name("body")
        assert body is not None
        self.body = body
        assignments = _assignments(body)
        self.tainted = _tainted(_params(node), assignments)
        self.tests = _tests(body)
        self.nulled = [(t, line) for t, value, line in assignments if node_text(value) in _NULLS]
        self.results = {t: line for t, value, line in assignments if value.type == "call_expression"}
        self.flows: list[Flow] = []

    def tested(self, names: set[str], line: int) -> bool:
        """Whether a condition at or before ``line`` tests one of ``names`` (a null check counts)."""
        return any(names & tested for at, tested, _ in self.tests if at <= line)

    def bounded(self, names: set[str], line: int) -> bool:
        """Whether a condition at or before ``line`` compares one of ``names`` by size (a bounds check)."""
        return any(names & compared for at, _, compared in self.tests if at <= line)

    def add(self, operation: str, sink: str, node: Node, names: set[str], *, kind: str = PARAMETER,
            source_line: int | None = None, sanitized: bool | None = None) -> None:  # fmt: skip
        line = node.start_point.row + 1
        checked = self.bounded(names, line) if sanitized is None else sanitized
        self.flows.append(Flow(self.name, operation, sink, line, node_text(node)[:60], kind,
                               source_line or self.start, sanitized=checked))  # fmt: skip

    def run(self) -> list[Flow]:
        for node in _walk(self.body):
            kind = node.type
            if kind == "subscript_expression":
                self.index(node, node.child_by_field_name("index") or node.named_children[-1])
            elif kind == "pointer_expression" and node_text(node.child_by_field_name("operator")) == "*":
                argument = node.child_by_field_name("argument")
                while argument is not None and argument.type == "parenthesized_expression":
                    argument = argument.named_children[0] if argument.named_children else None
                if argument is not None and argument.type == "binary_expression":
                    self.index(node, argument)
                elif argument is not None and argument.type == "identifier":
                    self.deref(node, node_text(argument))
            elif kind == "field_expression" and node_text(node.child_by_field_name("operator")) == "->":
                argument = node.child_by_field_name("argument")
                if argument is not None and argument.type == "identifier":
                    self.deref(node, node_text(argument))
            elif kind == "call_expression":
                self.call(node)
            elif kind == "delete_expression":
                self.free(node, _names(node), "delete")
        return self.flows

    def index(self, node: Node, index: Node) -> None:
        names = _names(index) & self.tainted
        if names:
            self.add("memory_index", "index", node, names)
        argument = node.child_by_field_name("argument")
        if node.type == "subscript_expression" and argument is not None and argument.type == "identifier":
            self.deref(node, node_text(argument))

    def deref(self, node: Node, name: str) -> None:
        line = node.start_point.row + 1
        assigned = self.results.get(name)
        if assigned is not None and assigned <= line and not self.tested({name}, line):
            self.add("memory_deref", "deref", node, {name}, kind="other", source_line=assigned, sanitized=False)

    def call(self, node: Node) -> None:
        name = _callee(node)
        arguments = [c for c in (node.child_by_field_name("arguments") or node).named_children if c.type != "comment"]
        for entry in self.vocab.sinks:
            if not entry.applies(name, ""):
                continue
            chosen = arguments if entry.args is None else [arguments[i] for i in entry.args if i < len(arguments)]
            names = set().union(*(_names(a) for a in chosen)) & self.tainted if chosen else set()
            if not names:
                continue
            if entry.operation == "memory_free":
                self.free(node, names, entry.id)
            else:
                self.add(entry.operation, entry.id, node, names)
            return

    def free(self, node: Node, names: set[str], sink: str) -> None:
        names = names & self.tainted
        if not names:
            return
        line = node.start_point.row + 1
        nulled = any(target in names and at >= line for target, at in self.nulled)
        self.add("memory_free", sink, node, names, sanitized=nulled)


def memory_flows(vocab: TaintVocabulary, functions: Iterable[tuple[str, Node]]) -> tuple[Flow, ...]:
    """Every memory flow of the given C or C++ functions (qualified name, definition node) of one file."""
    flows: list[Flow] = []
    for name, node in functions:
        if node.child_by_field_name("body") is None:
            continue
        seen: set[tuple[object, ...]] = set()
        for flow in _Function(name, node, vocab).run():
            key = (flow.operation, flow.sink_line, flow.sanitized)
            if key not in seen:
                seen.add(key)
                flows.append(flow)
    return tuple(flows)

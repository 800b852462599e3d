"""The taint step for C and C++: which input value reaches a memory operation in one function, and whether
a test on it comes first.

A function's inputs are its parameters and what it reads through a pointer, a field or an index or gets
from a call; they taint the locals assigned from them (assignments and initialisers, to a fixed point, so
the order of statements is not followed). A flow is a tainted value reaching an array index or the offset
of a dereferenced pointer sum (``memory_index``), an argument of a copy, a read into a buffer or a format,
or the destination ``dst + offset`` of a copy (``memory_copy``), the size of an allocation
(``memory_alloc``), or a ``free``/``delete`` (``memory_free``); a local assigned from a call's result
(through casts) and dereferenced (``->``, ``*``, an index) with no test of it before (``memory_deref``,
source ``other``) is a flow too, and so is a read of what a ``free``/``delete`` released, after it, before
anything assigns it again, unless the block of the free leaves first (``memory_use_after_free``, source
``other``). An index, copy or allocation flow is sanitised when an access path its operand reads (a name,
or a field access as a whole: ``p->len``, not ``p``) is compared by size (``<``, ``<=``, ``>``, ``>=``) in
an ``if``/``while``/``for`` condition, a conditional expression, an assertion or a checking macro (a call
given a comparison, ``CHECK(len > max, …)``) at or before the line of the operation, or when the operand
is clamped by ``min``; a dereference needs any test of the pointer first (a null check); a freed pointer is
sanitised when it is set to a null value after the free. The operand of ``sizeof`` is never read. The call
names are data: ``ruleset/taint/c.toml`` (C++ reads it too), with the shapes of a library's own wrappers
(``_TIFFmalloc``, ``ext4_kvmalloc``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from tree_sitter import Node

from ouroboros_gates.decider.instruments import _memory_syntax as c
from ouroboros_gates.decider.instruments._memory_free import freed_paths, use_after
from ouroboros_gates.decider.instruments._taint_model import (
    PARAMETER,
    Entry,
    Flow,
    TaintVocabulary,
    node_text,
)

__all__ = ["memory_flows"]


class _Function:
    """One function's memory flows."""

    def __init__(self, name: str, node: Node, vocab: TaintVocabulary) -> None:
        self.name, self.vocab = name, vocab
        self.start = node.start_point.row + 1
        body = node.child_by_field_name("body")
        assert body is not None
        self.body = body
        assignments = c.assignments(body)
        self.tainted = c.tainted([*c.params(node), *_read_from_memory(assignments)], assignments)
        self.tests = c.tests(body)
        self.nulled = _nulled(assignments)
        self.results = _call_results(assignments)
        self.sized = self.allocated(assignments)
        self.values = {t: value for t, value, _ in assignments}  # a local's (last) assigned value
        self.flows: list[Flow] = []

    def allocated(self, assignments: list[tuple[str, Node, int]]) -> dict[str, tuple[int, str]]:
        """Locals allocated here with a one-argument size (``copy = malloc(length)``): name -> (line, size
        text)."""
        return {
            t: (line, node_text(size))
            for t, value, line in assignments
            if (size := self.allocation_size(c.unwrapped(value))) is not None
        }

    def allocation_size(self, value: Node) -> Node | None:
        """The size of a one-argument allocation call (``malloc(n)``), else None."""
        if value.type != "call_expression" or not self.allocates(c.callee(value)):
            return None
        given = c.arguments(value)
        return given[0] if len(given) == 1 else None

    def allocates(self, name: str) -> bool:
        """Whether a call of ``name`` is an allocation the vocabulary names."""
        return any(e.operation == "memory_alloc" and e.applies(name, "") for e in self.vocab.sinks)

    def sized_by_construction(
        self, operation: str, arguments: list[Node], chosen: list[Node], line: int
    ) -> bool:
        """A duplicated string's copy (``fits``), or an allocation of strings' lengths (``measured``)."""
        if operation == "memory_copy":
            return self.fits(arguments, line)
        return operation == "memory_alloc" and self.all_measured(chosen)

    def all_measured(self, sizes: list[Node]) -> bool:
        """Whether there are sizes and each is ``measured``."""
        return bool(sizes) and all(self.measured(a) for a in sizes)

    def measured(self, size: Node) -> bool:
        """A size that is the length of strings that exist plus constants (``strlen(s) + sizeof("")``, through
        a local holding it): the size of objects already in memory, which no input can make wrap."""
        leaves = list(c.summands(self.resolved(size)))
        return any(c.is_length(leaf) for leaf in leaves) and all(_length_or_constant(leaf) for leaf in leaves)

    def resolved(self, size: Node) -> Node:
        """A size through casts, and through the local holding it (its last assigned value)."""
        size = c.unwrapped(size)
        if size.type == "identifier" and node_text(size) in self.values:
            return c.unwrapped(self.values[node_text(size)])
        return size

    def fits(self, arguments: list[Node], line: int) -> bool:
        """A string duplicated: ``memcpy(dst, src, n)`` where ``n`` is ``strlen(src)`` (plus a constant) and
        ``dst`` was allocated here with ``n`` itself (``length = strlen(s) + 1; copy = malloc(length);
        memcpy(copy, s, length)``): within both buffers by construction. A size read from elsewhere (a
        header's ``len``) may still overrun the source, and stays a flow."""
        if len(arguments) < 3:
            return False
        destination, source, size = arguments[:3]
        return self.allocated_with(destination, size, line) and self.length_of(source, size)

    def allocated_with(self, destination: Node, size: Node, line: int) -> bool:
        """Whether ``destination`` is a local allocated here, before ``line``, with ``size`` as written."""
        destination = c.unwrapped(destination)
        if destination.type != "identifier":
            return False
        sized = self.sized.get(node_text(destination))
        return sized is not None and sized[0] <= line and sized[1] == node_text(size)

    def length_of(self, source: Node, size: Node) -> bool:
        """Whether ``size`` holds the length of ``source`` (``strlen(source)``, or a local holding it)."""
        text = node_text(c.unwrapped(source))
        return any(node_text(c.unwrapped(a)) == text for n in self.lengths(size) for a in c.arguments(n))

    def lengths(self, size: Node) -> Iterator[Node]:
        """The ``strlen`` calls and their kin within a size (through the local holding it)."""
        return (n for n in c.walk(self.resolved(size)) if c.is_length(n))

    def tested(self, names: set[str], line: int) -> bool:
        """Whether a condition at or before ``line`` tests one of ``names`` (a null check counts)."""
        return any(names & tested for at, tested, _ in self.tests if at <= line)

    def bounded(self, operands: Iterable[Node], line: int) -> bool:
        """Whether a condition at or before ``line`` compares by size an access path the operands read (a
        bounds check on ``p->len`` bounds ``p->len``, not ``p->count``), or an operand is clamped by
        ``min``."""
        if any(c.clamped(o) for o in operands):
            return True
        return self.compared(set().union(*(c.paths(o) for o in operands)), line)

    def compared(self, paths: set[str], line: int) -> bool:
        """Whether a condition at or before ``line`` compares one of ``paths`` by size."""
        return any(paths & compared for at, _, compared in self.tests if at <= line)

    def add(
        self,
        operation: str,
        sink: str,
        node: Node,
        names: set[str],
        *,
        kind: str = PARAMETER,
        source_line: int | None = None,
        sanitized: bool | None = None,
        operands: Iterable[Node] = (),
    ) -> None:
        line = node.start_point.row + 1
        checked = self.bounded(operands, line) if sanitized is None else sanitized
        self.flows.append(
            Flow(
                self.name,
                operation,
                sink,
                line,
                node_text(node)[:60],
                kind,
                source_line or self.start,
                sanitized=checked,
            )
        )

    def run(self) -> list[Flow]:
        for node in c.evaluated(self.body):
            visit = _VISITS.get(node.type)
            if visit is not None:
                visit(self, node)
        return self.flows

    def subscript(self, node: Node) -> None:
        """``a[i]``: an index."""
        self.index(node, node.child_by_field_name("index") or node.named_children[-1])

    def pointer(self, node: Node) -> None:
        """``*p`` dereferences; ``*(p + i)`` indexes by pointer arithmetic."""
        if node_text(node.child_by_field_name("operator")) != "*":
            return
        argument = _without_parentheses(node.child_by_field_name("argument"))
        if argument is None:
            return
        if argument.type == "binary_expression":
            self.index(node, argument)
        elif argument.type == "identifier":
            self.deref(node, node_text(argument))

    def arrow(self, node: Node) -> None:
        """``p->field`` dereferences ``p``."""
        if node_text(node.child_by_field_name("operator")) == "->":
            self.deref_argument(node)

    def deref_argument(self, node: Node) -> None:
        """``p->f``, ``p[i]``: a dereference of the pointer read, when it is a name."""
        argument = node.child_by_field_name("argument")
        if argument is not None and argument.type == "identifier":
            self.deref(node, node_text(argument))

    def delete(self, node: Node) -> None:
        """C++'s ``delete p``: a free."""
        self.reuse(node)
        self.free(node, c.names(node), "delete")

    def index(self, node: Node, index: Node) -> None:
        names = c.names(index) & self.tainted
        if names:
            self.add("memory_index", "index", node, names, operands=[index])
        if node.type == "subscript_expression":
            self.deref_argument(node)

    def deref(self, node: Node, name: str) -> None:
        line = node.start_point.row + 1
        assigned = self.results.get(name)
        if assigned is not None and assigned <= line and not self.tested({name}, line):
            self.add(
                "memory_deref", "deref", node, {name}, kind="other", source_line=assigned, sanitized=False
            )

    def call(self, node: Node) -> None:
        """A call of a sink the vocabulary names: the first that one of its operands reaches is a flow."""
        name = c.callee(node)
        arguments = c.arguments(node)
        for entry in self.vocab.sinks:
            if entry.applies(name, "") and self.sink(node, entry, arguments):
                return

    def sink(self, node: Node, entry: Entry, arguments: list[Node]) -> bool:
        """Whether a tainted operand reaches the sink ``entry`` (the flow added); a free is checked for later
        use either way."""
        chosen = _operands(entry, arguments)
        if entry.operation == "memory_free":
            self.reuse(node)
        names = self.reached(chosen)
        if not names:
            return False
        self.record(node, entry, names, arguments, chosen)
        return True

    def reached(self, operands: list[Node]) -> set[str]:
        """The tainted names the operands read."""
        return set().union(*(c.names(a) for a in operands)) & self.tainted if operands else set()

    def record(
        self, node: Node, entry: Entry, names: set[str], arguments: list[Node], chosen: list[Node]
    ) -> None:
        """The flow into the sink ``entry``: a free, a copy or allocation sized by construction (sanitised),
        or one sanitised by a bounds check on its operands."""
        if entry.operation == "memory_free":
            self.free(node, names, entry.id)
        elif self.sized_by_construction(entry.operation, arguments, chosen, node.start_point.row + 1):
            self.add(entry.operation, entry.id, node, names, sanitized=True)
        else:
            self.add(entry.operation, entry.id, node, names, operands=chosen)

    def reuse(self, node: Node) -> None:
        """A read of what ``node`` frees, after it (``memory_use_after_free``, source ``other``)."""
        for freed in freed_paths(node):
            use = use_after(self.body, node, freed)
            if use is not None:
                self.add(
                    "memory_use_after_free",
                    "use_after_free",
                    use,
                    {freed},
                    kind="other",
                    source_line=node.start_point.row + 1,
                    sanitized=False,
                )

    def free(self, node: Node, names: set[str], sink: str) -> None:
        names = names & self.tainted
        if not names:
            return
        line = node.start_point.row + 1
        nulled = any(target in names and at >= line for target, at in self.nulled)
        self.add("memory_free", sink, node, names, sanitized=nulled)


_VISITS: dict[str, Callable[[_Function, Node], None]] = {
    "call_expression": _Function.call,
    "delete_expression": _Function.delete,
    "field_expression": _Function.arrow,
    "pointer_expression": _Function.pointer,
    "subscript_expression": _Function.subscript,
}
"""What each expression a function evaluates is checked for, by node type."""


def _read_from_memory(assignments: list[tuple[str, Node, int]]) -> set[str]:
    """Locals assigned a value read from memory or returned by a call (inputs of the function)."""
    return {target for target, value, _ in assignments if c.reads_memory(value)}


def _nulled(assignments: list[tuple[str, Node, int]]) -> list[tuple[str, int]]:
    """(name, line) of every assignment of a null value."""
    return [(t, line) for t, value, line in assignments if node_text(value) in c.NULLS]


def _call_results(assignments: list[tuple[str, Node, int]]) -> dict[str, int]:
    """Locals assigned a call's result (through casts): name -> line of the (last) such assignment."""
    return {t: line for t, value, line in assignments if c.unwrapped(value).type == "call_expression"}


def _length_or_constant(leaf: Node) -> bool:
    """Whether a term of a size is a string's length or a constant."""
    return c.is_length(leaf) or leaf.type in c.CONSTANT


def _without_parentheses(node: Node | None) -> Node | None:
    """An expression through parentheses (None when they are empty)."""
    while node is not None and node.type == "parenthesized_expression":
        node = node.named_children[0] if node.named_children else None
    return node


def _operands(entry: Entry, arguments: list[Node]) -> list[Node]:
    """The arguments a sink reads; a copy into ``dst + offset`` also writes at an index."""
    chosen = _chosen(entry, arguments)
    if _copies_to_offset(entry, arguments):
        return [arguments[0], *chosen]
    return chosen


def _chosen(entry: Entry, arguments: list[Node]) -> list[Node]:
    """The arguments the entry names (all of them when it names none)."""
    return arguments if entry.args is None else [arguments[i] for i in entry.args if i < len(arguments)]


def _copies_to_offset(entry: Entry, arguments: list[Node]) -> bool:
    """Whether a copy's destination is a sum (``dst + offset``)."""
    return (
        entry.operation == "memory_copy"
        and bool(arguments)
        and c.unwrapped(arguments[0]).type == "binary_expression"
    )


def memory_flows(vocab: TaintVocabulary, functions: Iterable[tuple[str, Node]]) -> tuple[Flow, ...]:
    """Every memory flow of the given C or C++ functions (qualified name, definition node) of one file."""
    flows: list[Flow] = []
    for name, node in functions:
        if node.child_by_field_name("body") is not None:
            flows.extend(_distinct(_Function(name, node, vocab).run()))
    return tuple(flows)


def _distinct(flows: Iterable[Flow]) -> Iterator[Flow]:
    """One function's flows, the first of each (operation, line, sanitised)."""
    seen: set[tuple[object, ...]] = set()
    for flow in flows:
        key = (flow.operation, flow.sink_line, flow.sanitized)
        if key not in seen:
            seen.add(key)
            yield flow

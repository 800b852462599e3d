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
_UNEVALUATED = frozenset({"sizeof_expression", "alignof_expression"})  # ``sizeof(*p)`` reads nothing


def _identifiers(node: Node | None) -> Iterator[Node]:
    if node is None:
        return
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "call_expression":  # a call's name is not a value it reads
            arguments = current.child_by_field_name("arguments")
            stack.extend([arguments] if arguments is not None else [])
        elif current.type in _UNEVALUATED:
            continue
        elif current.type in _IDENTIFIERS:
            yield current
        elif current.type != "field_identifier":
            stack.extend(current.children)


def _names(node: Node | None) -> set[str]:
    return {node_text(n) for n in _identifiers(node)}


def _paths(node: Node | None) -> set[str]:
    """The access paths a value reads: each identifier, and each field access as a whole (``p->len``, not
    ``p``), with the indices inside it; what a call computes is read through its arguments."""
    found: set[str] = set()
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if current.type == "call_expression":
            arguments = current.child_by_field_name("arguments")
            stack.extend([arguments] if arguments is not None else [])
        elif current.type in _UNEVALUATED:
            continue
        elif current.type == "identifier":
            found.add(node_text(current))
        elif current.type == "field_expression":
            found.add("".join(node_text(current).split()))
            stack.extend(i for s in _walk(current) if s.type == "subscript_expression"
                         for i in [s.child_by_field_name("index")] if i is not None)  # fmt: skip
        elif current.type != "field_identifier":
            stack.extend(current.children)
    return found


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


def _evaluated(node: Node) -> Iterator[Node]:
    """``_walk`` without what is never evaluated (the operand of ``sizeof``)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if current.type not in _UNEVALUATED:
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


_READS = frozenset({"call_expression", "field_expression", "subscript_expression", "pointer_expression"})


def _reads_memory(value: Node) -> bool:
    """Whether a value is read from memory or returned by a call (data the function did not compute)."""
    return any(n.type in _READS for n in _walk(value))


def _tainted(seeds: Iterable[str], assignments: list[tuple[str, Node, int]]) -> set[str]:
    tainted = set(seeds)
    changed = True
    while changed:
        changed = False
        for target, value, _ in assignments:
            if target not in tainted and _names(value) & tainted:
                tainted.add(target)
                changed = True
    return tainted


def _relational(node: Node) -> bool:
    return node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) in _RELATIONAL


def _bounded(condition: Node) -> set[str]:
    """Access paths an operand of a relational comparison (``<``, ``<=``, ``>``, ``>=``) in a condition reads."""
    found: set[str] = set()
    for node in _walk(condition):
        if _relational(node):
            found |= _paths(node)
    return found


def _check_call(node: Node) -> Node | None:
    """The arguments of an assertion, or of a call given a size comparison (a checking macro such as
    ``CHECK_RETURN(len > max, ...)``)."""
    if node.type != "call_expression":
        return None
    arguments = node.child_by_field_name("arguments")
    if "assert" in node_text(node.child_by_field_name("function")).lower():
        return arguments
    if arguments is not None and any(_relational(a) for a in arguments.named_children):
        return arguments
    return None


def _tests(body: Node) -> list[tuple[int, set[str], set[str]]]:
    """(line, names tested, access paths compared by size) of every condition and checking call."""
    out = []
    for node in _walk(body):
        condition = node.child_by_field_name("condition") if node.type in _TESTS else _check_call(node)
        if condition is not None:
            out.append((node.start_point.row + 1, _names(condition), _bounded(condition)))
    return out


def _unwrapped(node: Node) -> Node:
    """An expression through casts and parentheses."""
    while node.type in ("parenthesized_expression", "cast_expression") and node.named_children:
        node = node.named_children[-1]
    return node


_LENGTHS = frozenset({"strlen", "strnlen", "wcslen", "wcsnlen"})
_CONSTANT = frozenset({"number_literal", "sizeof_expression", "char_literal"})
_MIN = frozenset({"min", "MIN", "min_t", "umin", "Min", "MagickMin"})


def _clamped(node: Node) -> bool:
    """Whether a value is a ``min(...)`` (clamped to a bound), through casts and parentheses."""
    node = _unwrapped(node)
    return node.type == "call_expression" and _callee(node) in _MIN


def _summands(node: Node) -> Iterator[Node]:
    """The terms of a sum (``a + b + 1``: a, b, 1), through casts and parentheses."""
    node = _unwrapped(node)
    if node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) == "+":
        for child in node.named_children:
            yield from _summands(child)
    else:
        yield node


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
        read = {target for target, value, _ in assignments if _reads_memory(value)}
        self.tainted = _tainted([*_params(node), *read], assignments)
        self.tests = _tests(body)
        self.nulled = [(t, line) for t, value, line in assignments if node_text(value) in _NULLS]
        self.results = {t: line for t, value, line in assignments if _unwrapped(value).type == "call_expression"}
        # locals allocated here with a one-argument size (``copy = malloc(length)``): name -> (line, size text)
        self.sized = {t: (line, node_text(size)) for t, value, line in assignments
                      if (size := self.allocation_size(_unwrapped(value))) is not None}  # fmt: skip
        self.values = {t: value for t, value, _ in assignments}  # a local's (last) assigned value
        self.flows: list[Flow] = []

    def allocation_size(self, value: Node) -> Node | None:
        """The size of a one-argument allocation call (``malloc(n)``), else None."""
        if value.type != "call_expression":
            return None
        name = _callee(value)
        if not any(e.operation == "memory_alloc" and e.applies(name, "") for e in self.vocab.sinks):
            return None
        arguments = [c for c in (value.child_by_field_name("arguments") or value).named_children if c.type != "comment"]
        return arguments[0] if len(arguments) == 1 else None

    def sized_by_construction(self, operation: str, arguments: list[Node], chosen: list[Node], line: int) -> bool:
        """A duplicated string's copy (``fits``), or an allocation of strings' lengths (``measured``)."""
        if operation == "memory_copy":
            return self.fits(arguments, line)
        return operation == "memory_alloc" and bool(chosen) and all(self.measured(a) for a in chosen)

    def measured(self, size: Node) -> bool:
        """A size that is the length of strings that exist plus constants (``strlen(s) + sizeof("")``, through a
        local holding it): the size of objects already in memory, which no input can make wrap."""
        size = _unwrapped(size)
        if size.type == "identifier" and node_text(size) in self.values:
            size = _unwrapped(self.values[node_text(size)])
        leaves = list(_summands(size))
        lengths = [leaf for leaf in leaves if leaf.type == "call_expression" and _callee(leaf) in _LENGTHS]
        return bool(lengths) and all(leaf in lengths or leaf.type in _CONSTANT for leaf in leaves)

    def fits(self, arguments: list[Node], line: int) -> bool:
        """A string duplicated: ``memcpy(dst, src, n)`` where ``n`` is ``strlen(src)`` (plus a constant) and
        ``dst`` was allocated here with ``n`` itself (``length = strlen(s) + 1; copy = malloc(length);
        memcpy(copy, s, length)``): within both buffers by construction. A size read from elsewhere (a
        header's ``len``) may still overrun the source, and stays a flow."""
        if len(arguments) < 3 or _unwrapped(arguments[0]).type != "identifier":
            return False
        sized = self.sized.get(node_text(_unwrapped(arguments[0])))
        if sized is None or sized[0] > line or sized[1] != node_text(arguments[2]):
            return False
        size = _unwrapped(arguments[2])
        value = self.values.get(node_text(size), size) if size.type == "identifier" else size
        source = node_text(_unwrapped(arguments[1]))
        lengths = (n for n in _walk(value) if n.type == "call_expression" and _callee(n) in _LENGTHS)
        return any(node_text(_unwrapped(a)) == source
                   for n in lengths for a in (n.child_by_field_name("arguments") or n).named_children)  # fmt: skip

    def tested(self, names: set[str], line: int) -> bool:
        """Whether a condition at or before ``line`` tests one of ``names`` (a null check counts)."""
        return any(names & tested for at, tested, _ in self.tests if at <= line)

    def bounded(self, operands: Iterable[Node], line: int) -> bool:
        """Whether a condition at or before ``line`` compares by size an access path the operands read (a
        bounds check on ``p->len`` bounds ``p->len``, not ``p->count``), or an operand is clamped by ``min``."""
        if any(_clamped(o) for o in operands):
            return True
        paths = set().union(*(_paths(o) for o in operands))
        return any(paths & compared for at, _, compared in self.tests if at <= line)

    def add(self, operation: str, sink: str, node: Node, names: set[str], *, kind: str = PARAMETER,
            source_line: int | None = None, sanitized: bool | None = None,
            operands: Iterable[Node] = ()) -> None:  # fmt: skip
        line = node.start_point.row + 1
        checked = self.bounded(operands, line) if sanitized is None else sanitized
        self.flows.append(Flow(self.name, operation, sink, line, node_text(node)[:60], kind,
                               source_line or self.start, sanitized=checked))  # fmt: skip

    def run(self) -> list[Flow]:
        for node in _evaluated(self.body):
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
                self.reuse(node)
                self.free(node, _names(node), "delete")
        return self.flows

    def index(self, node: Node, index: Node) -> None:
        names = _names(index) & self.tainted
        if names:
            self.add("memory_index", "index", node, names, operands=[index])
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
            if entry.operation == "memory_copy" and arguments and _unwrapped(arguments[0]).type == "binary_expression":
                chosen = [arguments[0], *chosen]  # a copy into ``dst + offset`` writes at an index
            if entry.operation == "memory_free":
                self.reuse(node)
            names = set().union(*(_names(a) for a in chosen)) & self.tainted if chosen else set()
            if not names:
                continue
            if entry.operation == "memory_free":
                self.free(node, names, entry.id)
            elif self.sized_by_construction(entry.operation, arguments, chosen, node.start_point.row + 1):
                self.add(entry.operation, entry.id, node, names, sanitized=True)
            else:
                self.add(entry.operation, entry.id, node, names, operands=chosen)
            return

    def reuse(self, node: Node) -> None:
        """A read of what ``node`` frees, after it (``memory_use_after_free``, source ``other``)."""
        for freed in _freed_paths(node):
            use = _use_after(self.body, node, freed)
            if use is not None:
                self.add("memory_use_after_free", "use_after_free", use, {freed}, kind="other",
                         source_line=node.start_point.row + 1, sanitized=False)  # fmt: skip

    def free(self, node: Node, names: set[str], sink: str) -> None:
        names = names & self.tainted
        if not names:
            return
        line = node.start_point.row + 1
        nulled = any(target in names and at >= line for target, at in self.nulled)
        self.add("memory_free", sink, node, names, sanitized=nulled)


_EXITS = frozenset({"return_statement", "goto_statement", "break_statement", "continue_statement"})


def _freed_paths(node: Node) -> list[str]:
    """The access path a ``free``/``delete`` releases (its first argument, through casts and ``&``)."""
    if node.type == "delete_expression":
        argument = node.named_children[-1] if node.named_children else None
    else:
        arguments = node.child_by_field_name("arguments")
        argument = arguments.named_children[0] if arguments is not None and arguments.named_children else None
    while argument is not None and argument.type in ("cast_expression", "parenthesized_expression"):
        argument = argument.named_children[-1] if argument.named_children else None
    if argument is None or argument.type not in ("identifier", "field_expression"):
        return []
    return ["".join(node_text(argument).split())]


def _statement_of(node: Node) -> Node:
    """The statement ``node`` is part of (its ancestor whose parent is a compound statement)."""
    while node.parent is not None and node.parent.type != "compound_statement":
        node = node.parent
    return node


def _use_after(body: Node, freed_at: Node, path: str) -> Node | None:
    """The first read of ``path`` after it is freed, on a path the function can take: in source order, before
    anything assigns ``path`` again; a block that leaves (``return``, ``goto``, ``break``, ``continue``) after
    the free reaches no use beyond it."""
    statement = _statement_of(freed_at)
    block = statement.parent
    limit = None
    if block is not None:
        after = [c for c in block.named_children if c.start_byte >= statement.end_byte]
        leaving = next((c for c in after if c.type in _EXITS), None)
        limit = leaving.start_byte if leaving is not None and block is not body else None
    for node in _walk(body):
        if node.start_byte < freed_at.end_byte or (limit is not None and node.start_byte >= limit):
            continue
        if node.type not in ("identifier", "field_expression") or "".join(node_text(node).split()) != path:
            continue
        parent = node.parent
        if parent is not None and parent.type == "assignment_expression" and parent.child_by_field_name("left") == node:
            return None  # assigned again first: a new object from here on
        if parent is not None and parent.type in ("sizeof_expression",):
            continue
        return node
    return None


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

"""Which external input reaches which sensitive sink, inside one function, through its statements.

An intra-procedural, statement-ordered taint tracker over the tree-sitter tree (Java and Python): a
function's parameters and the vocabulary's sources (request parameters, headers, cookies, files, the
environment, stdin) taint what they are assigned to; assignments, string building, containers filled with
``add``/``put``/``append`` and calls carry taint on; a plain reassignment clears it, one inside a branch or
a loop only adds to it; a sanitiser clears it for its operations only. A call to a function of the same file
goes through that function's summary (which parameters reach its return value, and which reach a sink in
it), so a wrapper the roles step would infer is followed. Every flow says which source reached which sink
at which lines. The vocabulary is data: ``ruleset/taint/<language>.toml``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache

from tree_sitter import Node

from workers.decider.instruments.base import RULESET, digest_files

__all__ = ["TAINT_LANGUAGES", "Flow", "Taint", "TaintVocabulary", "find_flows", "taint_version", "vocabulary_of"]

TAINT_LANGUAGES = ("java", "python")
"""The languages the tracker reads (others: no coverage)."""

_PARAMETER = "parameter"
_UNHANDLED = object()


@dataclass(frozen=True)
class _Entry:
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

    def applies(self, name: str, receiver: str) -> bool:
        named = name in self.names or (self.pattern is not None and bool(self.pattern.search(name)))
        return named and (self.receiver is None or bool(self.receiver.search(receiver)))


@dataclass(frozen=True)
class TaintVocabulary:
    """One language's sources, sinks, sanitisers and container mutators."""

    sources: tuple[_Entry, ...]
    sinks: tuple[_Entry, ...]
    sanitizers: tuple[_Entry, ...]
    mutators: frozenset[str]


@dataclass(frozen=True)
class Taint:
    """What a value carries: the first source's kind and line, and the operations a sanitiser cleared."""

    kind: str
    line: int
    cleared: frozenset[str] = frozenset()
    via_call: bool = False
    tag: str | None = None

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

    def describe(self) -> str:
        """One line for a signal's message."""
        how = " through a sanitiser" if self.sanitized else (" through a call" if self.via_call else "")
        return (f"{self.source_kind} (line {self.source_line}) reaches {self.call} ({self.operation}) at line "
                f"{self.sink_line}{how}")  # fmt: skip


def _join(*values: Taint | None) -> Taint | None:
    found = [v for v in values if v is not None]
    if not found:
        return None
    best = min(found, key=lambda t: (len(t.cleared), t.kind == _PARAMETER, t.tag is not None, t.line))
    cleared = frozenset.intersection(*(t.cleared for t in found))
    return replace(best, cleared=cleared, via_call=any(t.via_call for t in found))


@cache
def vocabulary_of(language: str) -> TaintVocabulary | None:
    """The packaged vocabulary of a language, or None when the tracker does not cover it."""
    path = RULESET / "taint" / f"{language}.toml"
    if language not in TAINT_LANGUAGES or not path.exists():
        return None
    raw = tomllib.loads(path.read_text(encoding="utf-8"))

    def entry(row: dict[str, object], kind: str) -> _Entry:
        where = f"taint/{language}.toml: {kind} {row.get('id')!r}"
        try:
            args = row.get("args", "any")
            receiver = row.get("receiver")
            return _Entry(
                id=str(row["id"]),
                names=frozenset(str(n) for n in row.get("names", [])),  # type: ignore[attr-defined]
                receiver=re.compile(str(receiver)) if receiver is not None else None,
                kind=str(row.get("kind", "")),
                operation=str(row.get("operation", "")),
                args=None if args == "any" else tuple(int(a) for a in args),  # type: ignore[attr-defined]
                operations=frozenset(str(o) for o in row.get("operations", [])),  # type: ignore[attr-defined]
                attributes=tuple(str(a) for a in row.get("attributes", [])),  # type: ignore[attr-defined]
                tag=str(row.get("framework", row.get("library"))) if ("framework" in row or "library" in row) else None,
                pattern=re.compile(str(row["pattern"])) if "pattern" in row else None,
                argv_safe=bool(row.get("argv_safe", False)),
            )
        except (KeyError, TypeError, ValueError, re.error) as exc:
            raise ValueError(f"{where}: {exc}") from exc

    return TaintVocabulary(
        sources=tuple(entry(r, "source") for r in raw.get("source", [])),
        sinks=tuple(entry(r, "sink") for r in raw.get("sink", [])),
        sanitizers=tuple(entry(r, "sanitizer") for r in raw.get("sanitizer", [])),
        mutators=frozenset(raw.get("propagate", {}).get("mutators", [])),
    )


@cache
def taint_version(language: str) -> str:
    """The digest of the language's taint vocabulary."""
    return digest_files([RULESET / "taint" / f"{language}.toml"], "taint-1")


@dataclass
class _Summary:
    """What a same-file function does with its parameters: which reach its return, which reach a sink."""

    returns: set[int] = field(default_factory=set)
    sinks: dict[int, set[tuple[str, str, str | None]]] = field(default_factory=dict)


_LITERALS = frozenset(
    {"string_literal", "character_literal", "decimal_integer_literal", "hex_integer_literal", "octal_integer_literal",
     "binary_integer_literal", "decimal_floating_point_literal", "true", "false", "null_literal", "class_literal",
     "this", "integer", "float", "none", "ellipsis"}
)  # fmt: skip
_SKIP = frozenset(
    {"lambda_expression", "method_reference", "class_body", "class_declaration", "lambda", "function_definition",
     "class_definition", "decorated_definition", "comment", "line_comment", "block_comment"}
)  # fmt: skip


def _text(node: Node | None) -> str:
    return re.sub(r"\s+", "", (node.text or b"").decode("utf-8", "replace")) if node is not None else ""


def _simple_type(node: Node | None) -> str:
    text = re.sub(r"<.*", "", _text(node))
    return text.rsplit(".", 1)[-1]


class _Tracker:
    """One pass over one function body: statements in order, expressions to the taint they carry."""

    def __init__(self, language: str, vocab: TaintVocabulary, summaries: dict[str, _Summary], name: str) -> None:
        self.java = language == "java"
        self.vocab = vocab
        self.summaries = summaries
        self.name = name
        self.env: dict[str, Taint] = {}
        self.flows: list[Flow] = []
        self.returns: Taint | None = None
        self.weak = 0
        self.consts: dict[str, object] = {}  # locals holding a known literal (condition folding)
        self.slots: dict[str, list[Taint | None] | dict[object, Taint | None]] = {}  # precise containers
        self.statements = _JAVA_STATEMENTS if self.java else _PY_STATEMENTS
        self.expressions = _JAVA_EXPRESSIONS if self.java else _PY_EXPRESSIONS

    # -- state -----------------------------------------------------------------------------------
    def assign(self, name: str, value: Taint | None, *, join: bool = False) -> None:
        """A strong update (a plain assignment), or a join inside a branch, a loop or for ``+=``."""
        if join or self.weak:
            if value is not None:
                self.env[name] = _join(self.env.get(name), value) or value
        elif value is None:
            self.env.pop(name, None)
        else:
            self.env[name] = value

    def bind(self, name: str, node: Node | None, value: Taint | None) -> None:
        """Assign ``name`` from the expression ``node``: its taint, and its literal value or container shape."""
        self.assign(name, value)
        self.consts.pop(name, None)
        self.slots.pop(name, None)
        if self.weak or node is None:
            return
        constant = self.const(node)
        if constant is not None:
            self.consts[name] = constant
        shape = _container_shape(node)
        if shape is not None:
            self.slots[name] = shape

    def const(self, node: Node | None) -> object:
        """The literal value of a side-effect-free expression over literals and known locals, else None."""
        if node is None:
            return None
        kind = node.type
        if kind == "identifier":
            return self.consts.get(_text(node))
        if kind == "parenthesized_expression":
            return self.const(node.named_children[0]) if node.named_children else None
        if kind in ("binary_expression", "binary_operator", "comparison_operator", "boolean_operator"):
            children = node.named_children
            if len(children) != 2:
                return None
            return _fold(_operator(node), self.const(children[0]), self.const(children[1]))
        if kind in ("unary_expression", "not_operator", "unary_operator"):
            inner = self.const(node.child_by_field_name("operand") or node.child_by_field_name("argument"))
            return _fold_unary(_text(node), inner)
        if kind == "method_invocation" and _text(node.child_by_field_name("name")) == "charAt":
            base = self.const(node.child_by_field_name("object"))
            args = node.child_by_field_name("arguments")
            index = self.const(args.named_children[0]) if args and len(args.named_children) == 1 else None
            if isinstance(base, str) and isinstance(index, int) and 0 <= index < len(base):
                return base[index]
            return None
        return _literal(node)

    def _base(self, node: Node | None) -> str | None:
        """The variable a receiver or an lvalue is rooted at (``a`` of ``a.b[0].c``)."""
        while node is not None:
            if node.type == "identifier":
                return _text(node)
            node = (node.child_by_field_name("object") or node.child_by_field_name("array")
                    or node.child_by_field_name("value"))  # fmt: skip
        return None

    # -- statements ------------------------------------------------------------------------------
    def stmt(self, node: Node | None) -> None:
        """Run one statement (a node that is not one is read as an expression, for the sinks in it)."""
        if node is None or node.type in _SKIP:
            return
        handler = self.statements.get(node.type)
        if handler is not None:
            handler(self, node)
        elif node.type in _BLOCKS or node.type.endswith("statement"):
            self.children(node)
        else:
            self.expr(node)

    def children(self, node: Node) -> None:
        for child in node.named_children:
            self.stmt(child)

    def branch(self, *nodes: Node | None) -> None:
        """Statements that may not run: their assignments add taint and never clear it."""
        self.weak += 1
        for node in nodes:
            self.stmt(node)
        self.weak -= 1

    def loop(self, *nodes: Node | None) -> None:
        """A loop body twice (a value assigned late reaches its start on the next turn), as a branch."""
        self.branch(*nodes, *nodes)

    def if_statement(self, node: Node) -> None:
        condition = node.child_by_field_name("condition")
        self.expr(condition)
        decided = self.const(condition)
        consequence = node.child_by_field_name("consequence")
        alternatives = node.children_by_field_name("alternative")
        if decided is True:
            self.stmt(consequence)
        elif decided is False and self.java:
            for alternative in alternatives:
                self.stmt(alternative)
        elif decided is False:
            self.py_alternatives(alternatives)
        elif self.java:
            self.branch(consequence, *alternatives)
        else:
            self.weak += 1
            self.stmt(consequence)
            self.py_alternatives(alternatives)
            self.weak -= 1

    def py_alternatives(self, alternatives: Sequence[Node]) -> None:
        for child in alternatives:
            self.expr(child.child_by_field_name("condition"))
            self.stmt(child.child_by_field_name("consequence") or child.child_by_field_name("body"))

    def java_local(self, node: Node) -> None:
        for child in node.named_children:
            value = child.child_by_field_name("value") if child.type == "variable_declarator" else None
            if value is not None:
                self.bind(_text(child.child_by_field_name("name")), value, self.expr(value))

    def java_resource(self, node: Node) -> None:
        value = node.child_by_field_name("value")
        if value is not None:
            self.bind(_text(node.child_by_field_name("name")), value, self.expr(value))

    def java_switch(self, node: Node) -> None:
        """A switch on a known value runs the matching case to its ``break``; otherwise every case may run."""
        value = self.const(node.child_by_field_name("condition"))
        body = node.child_by_field_name("body")
        groups = [g for g in body.named_children if g.type == "switch_block_statement_group"] if body else []
        if value is None or not groups:
            self.loop(*node.named_children)
            return
        labels = [self.labels(g) for g in groups]
        start = next((i for i, found in enumerate(labels) if value in found), None)
        if start is None:
            start = next((i for i, found in enumerate(labels) if _DEFAULT in found), None)
        for group in groups[start:] if start is not None else []:
            for child in group.named_children:
                if child.type == "break_statement":
                    return
                if child.type != "switch_label":
                    self.stmt(child)

    def labels(self, group: Node) -> list[object]:
        found: list[object] = []
        for label in (c for c in group.named_children if c.type == "switch_label"):
            found.extend([self.const(c) for c in label.named_children] if label.named_children else [_DEFAULT])
        return found

    def java_foreach(self, node: Node) -> None:
        value = self.expr(node.child_by_field_name("value"))
        self.weak += 1
        self.assign(_text(node.child_by_field_name("name")), value)
        self.loop(node.child_by_field_name("body"))
        self.weak -= 1

    def plain_loop(self, node: Node) -> None:
        self.loop(*node.named_children)

    def try_statement(self, node: Node) -> None:
        for child in node.named_children:
            if child.type in _HANDLERS:
                self.branch(child)
            else:
                self.stmt(child)

    def return_statement(self, node: Node) -> None:
        for child in node.named_children:
            self.returns = _join(self.returns, self.expr(child))

    def py_for(self, node: Node) -> None:
        value = self.expr(node.child_by_field_name("right"))
        self.weak += 1
        self.py_assign(node.child_by_field_name("left"), value)
        self.loop(node.child_by_field_name("body"))
        self.stmt(node.child_by_field_name("alternative"))
        self.weak -= 1

    def py_with(self, node: Node) -> None:
        for clause in node.named_children:
            if clause.type != "with_clause":
                self.stmt(clause)
                continue
            for item in clause.named_children:
                value = item.child_by_field_name("value")
                if value is None or value.type != "as_pattern":
                    self.expr(value)
                    continue
                inner = value.named_children[0] if value.named_children else None
                alias = value.child_by_field_name("alias")
                target = alias.named_children[0] if alias is not None and alias.named_children else alias
                self.py_assign(target, self.expr(inner))

    def py_targets(self, node: Node | None) -> list[Node]:
        if node is None:
            return []
        if node.type in ("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "parenthesized_expression"):
            return [t for child in node.named_children for t in self.py_targets(child)]
        return [node]

    def py_assign(
        self, left: Node | None, value: Taint | None, *, join: bool = False, node: Node | None = None
    ) -> None:
        targets = self.py_targets(left)
        for target in targets:
            if target.type == "identifier" and len(targets) == 1 and not join:
                self.bind(_text(target), node, value)
            elif target.type == "identifier":
                self.assign(_text(target), value, join=join)
            else:
                base = self._base(target)
                if base is not None and value is not None:
                    self.assign(base, value, join=True)

    # -- expressions -----------------------------------------------------------------------------
    def expr(self, node: Node | None) -> Taint | None:
        """The taint an expression carries (sinks inside it are recorded on the way)."""
        if node is None or node.type in _SKIP or node.type in _LITERALS:
            return None
        if node.type == "identifier":
            return self.env.get(_text(node))
        handler = self.expressions.get(node.type)
        if handler is not None:
            return handler(self, node)
        return _join(*(self.expr(child) for child in node.named_children))

    def java_call(self, node: Node) -> Taint | None:
        args = node.child_by_field_name("arguments")
        name = _text(node.child_by_field_name("name"))
        return self.call(node, name, node.child_by_field_name("object"), args.named_children if args else [])

    def java_new(self, node: Node) -> Taint | None:
        if any(c.type == "class_body" for c in node.named_children):
            return None
        args = node.child_by_field_name("arguments")
        name = _simple_type(node.child_by_field_name("type"))
        return self.call(node, name, None, args.named_children if args else [])

    def java_field(self, node: Node) -> Taint | None:
        return self.expr(node.child_by_field_name("object"))

    def java_index(self, node: Node) -> Taint | None:
        self.expr(node.child_by_field_name("index"))
        return self.expr(node.child_by_field_name("array"))

    def java_ternary(self, node: Node) -> Taint | None:
        condition = node.child_by_field_name("condition")
        self.expr(condition)
        decided = self.const(condition)
        if isinstance(decided, bool):
            return self.expr(node.child_by_field_name("consequence" if decided else "alternative"))
        return _join(self.expr(node.child_by_field_name("consequence")),
                     self.expr(node.child_by_field_name("alternative")))  # fmt: skip

    def java_assignment(self, node: Node) -> Taint | None:
        right = node.child_by_field_name("right")
        value = self.expr(right)
        left = node.child_by_field_name("left")
        plain = _text(node.child_by_field_name("operator")) == "="
        if left is not None and left.type == "identifier":
            if plain:
                self.bind(_text(left), right, value)
            else:
                self.assign(_text(left), value, join=True)
            return value
        base = self._base(left)
        if base is not None and value is not None:
            self.assign(base, value, join=True)
        return value

    def java_cast(self, node: Node) -> Taint | None:
        return self.expr(node.child_by_field_name("value"))

    def nothing(self, node: Node) -> Taint | None:
        return None

    def py_attribute(self, node: Node) -> Taint | None:
        found = self.attribute_source(node)
        if found is not None:
            return found
        if node.type == "subscript":
            for sub in node.children_by_field_name("subscript"):
                self.expr(sub)
            return self.expr(node.child_by_field_name("value"))
        return self.expr(node.child_by_field_name("object"))

    def py_call(self, node: Node) -> Taint | None:
        function = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        values = [a.child_by_field_name("value") or a if a.type == "keyword_argument" else a
                  for a in (args.named_children if args else [])]  # fmt: skip
        if function is not None and function.type == "attribute":
            name = _text(function.child_by_field_name("attribute"))
            return self.call(node, name, function.child_by_field_name("object"), values)
        return self.call(node, _text(function).rsplit(".", 1)[-1], None, values)

    def py_assignment(self, node: Node) -> Taint | None:
        right = node.child_by_field_name("right")
        value = self.expr(right)
        augmented = node.type == "augmented_assignment"
        self.py_assign(node.child_by_field_name("left"), value, join=augmented, node=right)
        return value

    def py_walrus(self, node: Node) -> Taint | None:
        value = self.expr(node.child_by_field_name("value"))
        self.py_assign(node.child_by_field_name("name"), value)
        return value

    def py_conditional(self, node: Node) -> Taint | None:
        parts = node.named_children
        if len(parts) != 3:
            return _join(*(self.expr(child) for child in parts))
        self.expr(parts[1])
        decided = self.const(parts[1])
        if isinstance(decided, bool):
            return self.expr(parts[0] if decided else parts[2])
        return _join(self.expr(parts[0]), self.expr(parts[2]))

    def py_comprehension(self, node: Node) -> Taint | None:
        saved = dict(self.env)
        for clause in node.named_children:
            if clause.type == "for_in_clause":
                value = self.expr(clause.child_by_field_name("right"))
                self.py_assign(clause.child_by_field_name("left"), value)
        body = node.child_by_field_name("body")
        result = self.expr(body) if body is not None else None
        self.env = saved
        return result

    def attribute_source(self, node: Node) -> Taint | None:
        """``request.args``, ``os.environ[...]``: an attribute read the vocabulary names as a source."""
        dotted = _text(node.child_by_field_name("value") if node.type == "subscript" else node)
        for source in self.vocab.sources:
            for attribute in source.attributes:
                if dotted == attribute or dotted.startswith((attribute + ".", attribute + "[")):
                    return Taint(source.kind, node.start_point.row + 1, tag=source.tag)
        return None

    # -- calls -----------------------------------------------------------------------------------
    def call(self, node: Node, name: str, obj: Node | None, args: Sequence[Node]) -> Taint | None:
        """A call: a source, a container access, a sink, a same-file function, a sanitiser, or plain flow."""
        line = node.start_point.row + 1
        receiver_text = _text(obj)
        if obj is not None and not self.java and obj.type in ("attribute", "subscript"):
            found = self.attribute_source(obj)
            if found is not None:
                return found  # request.args.get("x"), os.environ.get("X")
        receiver = self.expr(obj) if obj is not None else None
        values = [self.expr(a) for a in args]
        source = self.call_source(name, receiver_text, line)
        if source is not None:
            # a request object that is already tainted (a parameter) taints without the prior; the prior only
            # adds the names it knows for objects that are not
            return replace(source, tag=None) if receiver is not None else source
        held = self.container(name, obj, args, values)
        if held is not _UNHANDLED:
            return held  # type: ignore[return-value]
        where = (f"{receiver_text}.{name}" if receiver_text else name)[:80]
        self.sinks(name, receiver_text, values, args, line, where)
        summary = self.summaries.get(name) if self.local(obj) else None
        if summary is not None:
            self.summary_flows(summary, values, line, where)
        if name in self.vocab.mutators and obj is not None:
            stored, base = _join(*values), self._base(obj)
            if stored is not None and base is not None:
                self.assign(base, stored, join=True)
        cleared = frozenset().union(*(e.operations for e in self.vocab.sanitizers if e.applies(name, receiver_text)))
        if cleared:
            value = _join(receiver, *values)
            if value is None or "*" in cleared:
                return None
            return replace(value, cleared=value.cleared | cleared)
        if summary is not None:
            reached = _join(*(values[i] for i in summary.returns if i < len(values)))
            return replace(reached, via_call=True) if reached is not None else None
        return _join(receiver, *values)

    def summary_flows(self, summary: _Summary, values: list[Taint | None], line: int, where: str) -> None:
        """A same-file function whose parameter reaches a sink: a tainted argument there is a flow here."""
        for index, sinks in summary.sinks.items():
            value = values[index] if index < len(values) else None
            if value is None:
                continue
            for operation, sink_id, tag in sorted(sinks, key=str):
                self.flow(operation, sink_id, line, where, replace(value, via_call=True), tag)

    def call_source(self, name: str, receiver_text: str, line: int) -> Taint | None:
        for source in self.vocab.sources:
            if source.names and source.applies(name, receiver_text):
                return Taint(source.kind, line, tag=source.tag)
            if not self.java and f"{receiver_text}.{name}" in source.attributes:
                return Taint(source.kind, line, tag=source.tag)
        return None

    def sinks(self, name: str, receiver_text: str, values: list[Taint | None], args: Sequence[Node], line: int,
              where: str) -> None:  # fmt: skip
        for sink in self.vocab.sinks:
            if not sink.applies(name, receiver_text):
                continue
            picked = range(len(values)) if sink.args is None else [i for i in sink.args if i < len(values)]
            for i in picked:
                value = values[i]
                if value is None or (sink.argv_safe and args[i].type in ("list", "tuple", "array_creation_expression")):
                    continue
                self.flow(sink.operation, sink.id, line, where, value, sink.tag)

    def container(self, name: str, obj: Node | None, args: Sequence[Node], values: list[Taint | None]) -> object:
        """A list or map built in this function and used with literal indexes and keys stays precise."""
        if obj is None or obj.type != "identifier" or _text(obj) not in self.slots:
            return _UNHANDLED
        var = _text(obj)
        slot = self.slots[var]
        if name in _READ_ONLY:
            return None
        keys = [self.const(a) for a in args]
        if not self.weak or name == "get":
            op = _list_op if isinstance(slot, list) else _map_op
            handled = op(slot, name, keys, values)  # type: ignore[arg-type]
            if handled is not _UNHANDLED:
                if name in ("add", "addLast", "append", "offer", "put") and values:
                    self.assign(var, values[-1], join=True)
                return handled
        del self.slots[var]  # changed in a way not followed element by element
        return _UNHANDLED

    def local(self, obj: Node | None) -> bool:
        """Whether a call can name a function of this file: no receiver, this/self, a new instance, a class."""
        if obj is None or obj.type in ("this", "object_creation_expression"):
            return True
        text = _text(obj)
        return text in ("self", "cls") if not self.java else (obj.type == "identifier" and text[:1].isupper())

    def flow(self, operation: str, sink: str, line: int, call: str, value: Taint, tag: str | None) -> None:
        tags = tuple(sorted({t for t in (value.tag, tag) if t is not None}))
        self.flows.append(Flow(self.name, operation, sink, line, call, value.kind, value.line,
                               sanitized=not value.reaches(operation), via_call=value.via_call, tags=tags))  # fmt: skip


_DEFAULT = "<default>"
_READ_ONLY = frozenset({"size", "isEmpty", "containsKey", "contains", "length", "__len__"})
_HANDLERS = frozenset({"catch_clause", "finally_clause", "except_clause", "else_clause", "except_group_clause"})
_BLOCKS = frozenset(
    {"block", "switch_block", "switch_block_statement_group", "switch_rule", "catch_clause", "finally_clause",
     "constructor_body", "expression_statement", "resource_specification", "elif_clause", "else_clause",
     "except_clause", "module", "case_clause"}
)  # fmt: skip
_Statement = Callable[[_Tracker, Node], None]
_Expression = Callable[[_Tracker, Node], Taint | None]
_JAVA_STATEMENTS: dict[str, _Statement] = {
    "local_variable_declaration": _Tracker.java_local,
    "if_statement": _Tracker.if_statement,
    "switch_expression": _Tracker.java_switch,
    "switch_statement": _Tracker.java_switch,
    "while_statement": _Tracker.plain_loop,
    "for_statement": _Tracker.plain_loop,
    "do_statement": _Tracker.plain_loop,
    "enhanced_for_statement": _Tracker.java_foreach,
    "try_statement": _Tracker.try_statement,
    "try_with_resources_statement": _Tracker.try_statement,
    "resource": _Tracker.java_resource,
    "return_statement": _Tracker.return_statement,
}
_PY_STATEMENTS: dict[str, _Statement] = {
    "if_statement": _Tracker.if_statement,
    "for_statement": _Tracker.py_for,
    "while_statement": _Tracker.plain_loop,
    "try_statement": _Tracker.try_statement,
    "with_statement": _Tracker.py_with,
    "return_statement": _Tracker.return_statement,
}
_JAVA_EXPRESSIONS: dict[str, _Expression] = {
    "method_invocation": _Tracker.java_call,
    "object_creation_expression": _Tracker.java_new,
    "field_access": _Tracker.java_field,
    "array_access": _Tracker.java_index,
    "ternary_expression": _Tracker.java_ternary,
    "assignment_expression": _Tracker.java_assignment,
    "cast_expression": _Tracker.java_cast,
    "instanceof_expression": _Tracker.nothing,
    "update_expression": _Tracker.nothing,
}
_PY_EXPRESSIONS: dict[str, _Expression] = {
    "attribute": _Tracker.py_attribute,
    "subscript": _Tracker.py_attribute,
    "call": _Tracker.py_call,
    "assignment": _Tracker.py_assignment,
    "augmented_assignment": _Tracker.py_assignment,
    "named_expression": _Tracker.py_walrus,
    "conditional_expression": _Tracker.py_conditional,
    "list_comprehension": _Tracker.py_comprehension,
    "generator_expression": _Tracker.py_comprehension,
    "set_comprehension": _Tracker.py_comprehension,
    "dictionary_comprehension": _Tracker.py_comprehension,
}


def _container_shape(node: Node) -> list[Taint | None] | dict[object, Taint | None] | None:
    """An empty list or map made here (``new ArrayList<>()``, ``[]``, ``{}``), else None."""
    made = _simple_type(node.child_by_field_name("type")) if node.type == "object_creation_expression" else ""
    if made.endswith(("List", "Vector", "Deque", "Stack")) or (node.type == "list" and not node.named_children):
        return []
    if made.endswith(("Map", "Hashtable", "Properties")) or (node.type == "dictionary" and not node.named_children):
        return {}
    return None


def _list_op(slot: list[Taint | None], name: str, keys: list[object], values: list[Taint | None]) -> object:
    if name in ("add", "addLast", "append", "offer") and len(values) == 1:
        slot.append(values[0])
        return None
    index = keys[0] if keys and isinstance(keys[0], int) and not isinstance(keys[0], bool) else None
    if name in ("add", "insert") and len(values) == 2 and index is not None and 0 <= index <= len(slot):
        slot.insert(index, values[1])
        return None
    if name in ("remove", "pop") and len(keys) == 1 and index is not None and 0 <= index < len(slot):
        return slot.pop(index)
    if name == "get" and len(keys) == 1 and index is not None:
        return slot[index] if -len(slot) <= index < len(slot) else None
    return _UNHANDLED


def _map_op(slot: dict[object, Taint | None], name: str, keys: list[object], values: list[Taint | None]) -> object:
    key = keys[0] if keys else None
    if key is None:
        return _UNHANDLED
    if name == "put" and len(values) == 2:
        slot[key] = values[1]
        return None
    if name in ("get", "remove"):
        return slot.pop(key, None) if name == "remove" else slot.get(key)
    if name == "getOrDefault" and len(values) == 2:
        return _join(slot.get(key), values[1]) if key not in slot else slot[key]
    return _UNHANDLED


def _operator(node: Node) -> str:
    op = node.child_by_field_name("operator")
    return _text(op) if op is not None else next((_text(c) for c in node.children if not c.is_named), "")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_ARITHMETIC: dict[str, Callable[[int, int], object]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: a // b if b else None, "%": lambda a, b: a % b if b else None,
    ">": lambda a, b: a > b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b,
}  # fmt: skip
_LOGIC: dict[str, Callable[[bool, bool], bool]] = {
    "&&": lambda a, b: a and b, "and": lambda a, b: a and b, "||": lambda a, b: a or b, "or": lambda a, b: a or b,
}  # fmt: skip


def _fold(op: str, left: object, right: object) -> object:
    """A binary operator over two known literals (ints, strings, booleans), else None."""
    if left is None or right is None:
        return None
    if op in _ARITHMETIC and _is_int(left) and _is_int(right):
        return _ARITHMETIC[op](left, right)  # type: ignore[arg-type]
    if op == "+" and isinstance(left, str) and isinstance(right, str):
        return left + right
    if op in ("==", "!="):
        return (left == right) == (op == "==")
    if op in _LOGIC and isinstance(left, bool) and isinstance(right, bool):
        return _LOGIC[op](left, right)
    return None


def _fold_unary(text: str, inner: object) -> object:
    if text.startswith(("!", "not")):
        return (not inner) if isinstance(inner, bool) else None
    return -inner if text.startswith("-") and _is_int(inner) else None  # type: ignore[operator]


def _literal(node: Node) -> object:
    kind = node.type
    text = (node.text or b"").decode("utf-8", "replace")
    if kind in ("decimal_integer_literal", "integer"):
        try:
            return int(text.rstrip("lL").replace("_", ""))
        except ValueError:
            return None
    if kind in ("true", "false"):
        return kind == "true"
    if kind == "character_literal":
        return text[1:-1] if len(text) == 3 else None
    plain = kind == "string" and not any(c.type == "interpolation" for c in node.named_children)
    if (kind == "string_literal" or plain) and len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        inner = text[1:-1]
        return inner if "\\" not in inner else None
    return None


def _param_name(child: Node, java: bool) -> list[str]:
    if java:
        named = child.child_by_field_name("name")
        if named is None and child.type == "spread_parameter":
            named = next((c.child_by_field_name("name") for c in child.named_children
                          if c.type == "variable_declarator"), None)  # fmt: skip
        return [_text(named)] if named is not None else []
    if child.type == "identifier":
        return [_text(child)]
    if child.type in ("typed_parameter", "default_parameter", "typed_default_parameter"):
        named = child.child_by_field_name("name") or next(
            (c for c in child.named_children if c.type == "identifier"), None
        )
        return [_text(named)] if named is not None else []
    if child.type in ("list_splat_pattern", "dictionary_splat_pattern"):
        return [_text(c) for c in child.named_children if c.type == "identifier"]
    return []


def _params_in_order(node: Node, java: bool) -> list[str]:
    """A declaration's parameter names in order (Python's ``self``/``cls`` left out)."""
    params = node.child_by_field_name("parameters")
    names = [name for child in (params.named_children if params else []) for name in _param_name(child, java)]
    return names[1:] if not java and names[:1] in (["self"], ["cls"]) else names


def _run(tracker: _Tracker, node: Node, params: Iterable[str]) -> _Tracker:
    for param in params:
        tracker.env[param] = Taint(_PARAMETER, node.start_point.row + 1)
    tracker.stmt(node.child_by_field_name("body"))
    return tracker


def _summaries(language: str, vocab: TaintVocabulary, declared: list[tuple[str, Node]]) -> dict[str, _Summary]:
    """Per simple name: which parameters reach the return value and which reach a sink (two rounds, so a
    helper calling a helper is followed)."""
    java = language == "java"
    summaries: dict[str, _Summary] = {}
    for _ in range(2):
        fresh: dict[str, _Summary] = {}
        for name, node in declared:
            summary = fresh.setdefault(name.rsplit(".", 1)[-1].split("#", 1)[0], _Summary())
            for index, param in enumerate(_params_in_order(node, java)):
                tracker = _run(_Tracker(language, vocab, summaries, name), node, [param])
                if tracker.returns is not None and tracker.returns.kind == _PARAMETER:
                    summary.returns.add(index)
                for flow in tracker.flows:
                    if flow.source_kind == _PARAMETER and not flow.sanitized:
                        tag = flow.tags[0] if flow.tags else None
                        summary.sinks.setdefault(index, set()).add((flow.operation, flow.sink, tag))
        summaries = fresh
    return summaries


def find_flows(language: str, functions: Iterable[tuple[str, Node]]) -> tuple[Flow, ...]:
    """Every flow in the given functions (qualified name, declaration node) of one file."""
    vocab = vocabulary_of(language)
    if vocab is None:
        return ()
    declared = [(name, node) for name, node in functions if node.child_by_field_name("body") is not None]
    summaries = _summaries(language, vocab, declared)
    flows: list[Flow] = []
    for name, node in declared:
        tracker = _run(_Tracker(language, vocab, summaries, name), node, _params_in_order(node, language == "java"))
        seen: set[tuple[object, ...]] = set()
        for flow in tracker.flows:
            key = (flow.operation, flow.sink_line, flow.source_kind, flow.source_line, flow.sanitized)
            if key not in seen:
                seen.add(key)
                flows.append(flow)
    return tuple(flows)

"""The taint tracker's walk over one function body: statements in order, expressions to the taint they
carry, calls to sources, sinks, sanitisers, containers and same-file summaries (see ``taint``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from tree_sitter import Node

from decider.instruments._taint_model import (
    LITERALS,
    SKIP,
    UNHANDLED,
    Flow,
    Summary,
    Taint,
    TaintVocabulary,
    container_shape,
    fold,
    fold_unary,
    join_taints,
    list_op,
    literal,
    map_op,
    node_text,
    operator_of,
    simple_type,
)

__all__ = ["Tracker"]


class Tracker:
    """One pass over one function body: statements in order, expressions to the taint they carry."""

    def __init__(self, language: str, vocab: TaintVocabulary, summaries: dict[str, Summary], name: str) -> None:
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
        self.vectors: set[str] = set()  # locals holding a list or array made here (an argument vector)
        self.statements = _JAVA_STATEMENTS if self.java else _PY_STATEMENTS
        self.expressions = _JAVA_EXPRESSIONS if self.java else _PY_EXPRESSIONS

    # -- state -----------------------------------------------------------------------------------
    def assign(self, name: str, value: Taint | None, *, join: bool = False) -> None:
        """A strong update (a plain assignment), or a join inside a branch, a loop or for ``+=``."""
        if join or self.weak:
            if value is not None:
                self.env[name] = join_taints(self.env.get(name), value) or value
        elif value is None:
            self.env.pop(name, None)
        else:
            self.env[name] = value

    def bind(self, name: str, node: Node | None, value: Taint | None) -> None:
        """Assign ``name`` from the expression ``node``: its taint, and its literal value or container shape."""
        self.assign(name, value)
        self.consts.pop(name, None)
        self.slots.pop(name, None)
        self.vectors.discard(name)
        if self.weak or node is None:
            return
        if node.type in _VECTORS:
            self.vectors.add(name)
        constant = self.const(node)
        if constant is not None:
            self.consts[name] = constant
        shape = container_shape(node)
        if shape is not None:
            self.slots[name] = shape

    def const(self, node: Node | None) -> object:
        """The literal value of a side-effect-free expression over literals and known locals, else None."""
        if node is None:
            return None
        kind = node.type
        if kind == "identifier":
            return self.consts.get(node_text(node))
        if kind == "parenthesized_expression":
            return self.const(node.named_children[0]) if node.named_children else None
        if kind in ("binary_expression", "binary_operator", "comparison_operator", "boolean_operator"):
            children = node.named_children
            if len(children) != 2:
                return None
            return fold(operator_of(node), self.const(children[0]), self.const(children[1]))
        if kind in ("unary_expression", "not_operator", "unary_operator"):
            inner = self.const(node.child_by_field_name("operand") or node.child_by_field_name("argument"))
            return fold_unary(node_text(node), inner)
        if kind == "method_invocation" and node_text(node.child_by_field_name("name")) == "charAt":
            base = self.const(node.child_by_field_name("object"))
            args = node.child_by_field_name("arguments")
            index = self.const(args.named_children[0]) if args and len(args.named_children) == 1 else None
            if isinstance(base, str) and isinstance(index, int) and 0 <= index < len(base):
                return base[index]
            return None
        return literal(node)

    def _base(self, node: Node | None) -> str | None:
        """The variable a receiver or an lvalue is rooted at (``a`` of ``a.b[0].c``)."""
        while node is not None:
            if node.type == "identifier":
                return node_text(node)
            node = (node.child_by_field_name("object") or node.child_by_field_name("array")
                    or node.child_by_field_name("value"))  # fmt: skip
        return None

    # -- statements ------------------------------------------------------------------------------
    def stmt(self, node: Node | None) -> None:
        """Run one statement (a node that is not one is read as an expression, for the sinks in it)."""
        if node is None or node.type in SKIP:
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
                self.bind(node_text(child.child_by_field_name("name")), value, self.expr(value))

    def java_resource(self, node: Node) -> None:
        value = node.child_by_field_name("value")
        if value is not None:
            self.bind(node_text(node.child_by_field_name("name")), value, self.expr(value))

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
        self.assign(node_text(node.child_by_field_name("name")), value)
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
            self.returns = join_taints(self.returns, self.expr(child))

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
                self.bind(node_text(target), node, value)
            elif target.type == "identifier":
                self.assign(node_text(target), value, join=join)
            else:
                base = self._base(target)
                if base is not None and value is not None:
                    self.assign(base, value, join=True)

    # -- expressions -----------------------------------------------------------------------------
    def expr(self, node: Node | None) -> Taint | None:
        """The taint an expression carries (sinks inside it are recorded on the way)."""
        if node is None or node.type in SKIP or node.type in LITERALS:
            return None
        if node.type == "identifier":
            return self.env.get(node_text(node))
        handler = self.expressions.get(node.type)
        if handler is not None:
            return handler(self, node)
        return join_taints(*(self.expr(child) for child in node.named_children))

    def java_call(self, node: Node) -> Taint | None:
        args = node.child_by_field_name("arguments")
        name = node_text(node.child_by_field_name("name"))
        return self.call(node, name, node.child_by_field_name("object"), args.named_children if args else [])

    def java_new(self, node: Node) -> Taint | None:
        if any(c.type == "class_body" for c in node.named_children):
            return None
        args = node.child_by_field_name("arguments")
        name = simple_type(node.child_by_field_name("type"))
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
        return join_taints(self.expr(node.child_by_field_name("consequence")),
                     self.expr(node.child_by_field_name("alternative")))  # fmt: skip

    def java_assignment(self, node: Node) -> Taint | None:
        right = node.child_by_field_name("right")
        value = self.expr(right)
        left = node.child_by_field_name("left")
        plain = node_text(node.child_by_field_name("operator")) == "="
        if left is not None and left.type == "identifier":
            if plain:
                self.bind(node_text(left), right, value)
            else:
                self.assign(node_text(left), value, join=True)
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
            name = node_text(function.child_by_field_name("attribute"))
            return self.call(node, name, function.child_by_field_name("object"), values)
        return self.call(node, node_text(function).rsplit(".", 1)[-1], None, values)

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
            return join_taints(*(self.expr(child) for child in parts))
        self.expr(parts[1])
        decided = self.const(parts[1])
        if isinstance(decided, bool):
            return self.expr(parts[0] if decided else parts[2])
        return join_taints(self.expr(parts[0]), self.expr(parts[2]))

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
        dotted = node_text(node.child_by_field_name("value") if node.type == "subscript" else node)
        for source in self.vocab.sources:
            for attribute in source.attributes:
                if dotted == attribute or dotted.startswith((attribute + ".", attribute + "[")):
                    return Taint(source.kind, node.start_point.row + 1, tag=source.tag)
        return None

    # -- calls -----------------------------------------------------------------------------------
    def call(self, node: Node, name: str, obj: Node | None, args: Sequence[Node]) -> Taint | None:
        """A call: a source, a container access, a sink, a same-file function, a sanitiser, or plain flow."""
        line = node.start_point.row + 1
        receiver_text = node_text(obj)
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
        if held is not UNHANDLED:
            return held  # type: ignore[return-value]
        where = (f"{receiver_text}.{name}" if receiver_text else name)[:80]
        self.sinks(name, receiver_text, values, args, line, where)
        summary = self.summaries.get(name) if self.local(obj) else None
        if summary is not None:
            self.summary_flows(summary, values, line, where)
        if name in self.vocab.mutators and obj is not None:
            stored, base = join_taints(*values), self._base(obj)
            if stored is not None and base is not None:
                self.assign(base, stored, join=True)
        cleared = frozenset().union(*(e.operations for e in self.vocab.sanitizers if e.applies(name, receiver_text)))
        if cleared:
            value = join_taints(receiver, *values)
            if value is None or "*" in cleared:
                return None
            return replace(value, cleared=value.cleared | cleared)
        if summary is not None:
            reached = join_taints(*(values[i] for i in summary.returns if i < len(values)))
            return replace(reached, via_call=True) if reached is not None else None
        return join_taints(receiver, *values)

    def summary_flows(self, summary: Summary, values: list[Taint | None], line: int, where: str) -> None:
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
                if value is None or (sink.argv_safe and self.vector(args[i])):
                    continue
                self.flow(sink.operation, sink.id, line, where, value, sink.tag)

    def vector(self, node: Node) -> bool:
        """Whether an argument is an argument vector: a list, tuple or array made in place, or a local that
        holds one made in this function (``cmd = ["ls", path]; run(cmd)``), never a string a shell parses."""
        return node.type in _VECTORS or (node.type == "identifier" and node_text(node) in self.vectors)

    def container(self, name: str, obj: Node | None, args: Sequence[Node], values: list[Taint | None]) -> object:
        """A list or map built in this function and used with literal indexes and keys stays precise."""
        if obj is None or obj.type != "identifier" or node_text(obj) not in self.slots:
            return UNHANDLED
        var = node_text(obj)
        slot = self.slots[var]
        if name in _READ_ONLY:
            return None
        keys = [self.const(a) for a in args]
        if not self.weak or name == "get":
            op = list_op if isinstance(slot, list) else map_op
            handled = op(slot, name, keys, values)  # type: ignore[arg-type]
            if handled is not UNHANDLED:
                if name in ("add", "addLast", "append", "offer", "put") and values:
                    self.assign(var, values[-1], join=True)
                return handled
        del self.slots[var]  # changed in a way not followed element by element
        return UNHANDLED

    def local(self, obj: Node | None) -> bool:
        """Whether a call can name a function of this file: no receiver, this/self, a new instance, a class."""
        if obj is None or obj.type in ("this", "object_creation_expression"):
            return True
        text = node_text(obj)
        return text in ("self", "cls") if not self.java else (obj.type == "identifier" and text[:1].isupper())

    def flow(self, operation: str, sink: str, line: int, call: str, value: Taint, tag: str | None) -> None:
        tags = tuple(sorted({t for t in (value.tag, tag) if t is not None}))
        self.flows.append(Flow(self.name, operation, sink, line, call, value.kind, value.line,
                               sanitized=not value.reaches(operation), via_call=value.via_call, tags=tags))  # fmt: skip


_DEFAULT = "<default>"
_VECTORS = frozenset({"list", "tuple", "list_comprehension", "array_creation_expression", "array_initializer"})
_READ_ONLY = frozenset({"size", "isEmpty", "containsKey", "contains", "length", "__len__"})
_HANDLERS = frozenset({"catch_clause", "finally_clause", "except_clause", "else_clause", "except_group_clause"})
_BLOCKS = frozenset(
    {"block", "switch_block", "switch_block_statement_group", "switch_rule", "catch_clause", "finally_clause",
     "constructor_body", "expression_statement", "resource_specification", "elif_clause", "else_clause",
     "except_clause", "module", "case_clause"}
)  # fmt: skip
_Statement = Callable[[Tracker, Node], None]
_Expression = Callable[[Tracker, Node], Taint | None]
_JAVA_STATEMENTS: dict[str, _Statement] = {
    "local_variable_declaration": Tracker.java_local,
    "if_statement": Tracker.if_statement,
    "switch_expression": Tracker.java_switch,
    "switch_statement": Tracker.java_switch,
    "while_statement": Tracker.plain_loop,
    "for_statement": Tracker.plain_loop,
    "do_statement": Tracker.plain_loop,
    "enhanced_for_statement": Tracker.java_foreach,
    "try_statement": Tracker.try_statement,
    "try_with_resources_statement": Tracker.try_statement,
    "resource": Tracker.java_resource,
    "return_statement": Tracker.return_statement,
}
_PY_STATEMENTS: dict[str, _Statement] = {
    "if_statement": Tracker.if_statement,
    "for_statement": Tracker.py_for,
    "while_statement": Tracker.plain_loop,
    "try_statement": Tracker.try_statement,
    "with_statement": Tracker.py_with,
    "return_statement": Tracker.return_statement,
}
_JAVA_EXPRESSIONS: dict[str, _Expression] = {
    "method_invocation": Tracker.java_call,
    "object_creation_expression": Tracker.java_new,
    "field_access": Tracker.java_field,
    "array_access": Tracker.java_index,
    "ternary_expression": Tracker.java_ternary,
    "assignment_expression": Tracker.java_assignment,
    "cast_expression": Tracker.java_cast,
    "instanceof_expression": Tracker.nothing,
    "update_expression": Tracker.nothing,
}
_PY_EXPRESSIONS: dict[str, _Expression] = {
    "attribute": Tracker.py_attribute,
    "subscript": Tracker.py_attribute,
    "call": Tracker.py_call,
    "assignment": Tracker.py_assignment,
    "augmented_assignment": Tracker.py_assignment,
    "named_expression": Tracker.py_walrus,
    "conditional_expression": Tracker.py_conditional,
    "list_comprehension": Tracker.py_comprehension,
    "generator_expression": Tracker.py_comprehension,
    "set_comprehension": Tracker.py_comprehension,
    "dictionary_comprehension": Tracker.py_comprehension,
}

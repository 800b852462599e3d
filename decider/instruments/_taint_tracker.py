"""The taint tracker's walk over one function body: statements in order, expressions to the taint they
carry, calls to sources, sinks, sanitisers, containers and same-file summaries (see ``taint``). What every
language shares is here (the flows into sinks: ``_taint_sinks``); each language's statements and expressions
are its subclass's (``_taint_java``, ``_taint_python``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from tree_sitter import Node

from ouroboros_gates.decider.instruments._taint_env import Sides
from ouroboros_gates.decider.instruments._taint_guards import exits, is_element, validated
from ouroboros_gates.decider.instruments._taint_model import (
    LITERALS,
    SKIP,
    UNHANDLED,
    Entry,
    Summary,
    Taint,
    join_taints,
    node_text,
)
from ouroboros_gates.decider.instruments._taint_sinks import Call, SinkWalk
from ouroboros_gates.decider.instruments._taint_slots import list_op, map_op

__all__ = ["Expression", "Statement", "Tracker"]


class Tracker(SinkWalk, ABC):
    """One pass over one function body: statements in order, expressions to the taint they carry."""

    members: ClassVar[frozenset[str]] = frozenset()
    """The node types of a member read (``request.args``, ``req.query[...]``), which the vocabulary's
    ``attributes`` may name as a source."""
    statements: ClassVar[dict[str, Statement]] = {}
    """Handlers of the language's statements (by node type); other statements run their children."""
    expressions: ClassVar[dict[str, Expression]] = {}
    """Handlers of the language's expressions; others join their children's taint."""

    @abstractmethod
    def alternatives(self, alternatives: Sequence[Node]) -> None:
        """Run an ``if``'s alternatives (its else branch; Python's ``elif`` and ``else`` clauses)."""

    @abstractmethod
    def local(self, obj: Node | None) -> bool:
        """Whether a call can name a function of this file (by its receiver)."""

    def parts(self, node: Node) -> tuple[str, Node | None, Sequence[Node]] | None:
        """A call's name, receiver and arguments as this language writes them (None: not a call)."""
        return None

    # -- statements ------------------------------------------------------------------------------
    def stmt(self, node: Node | None) -> None:
        """Run one statement (a node that is not one is read as an expression, for the sinks in it)."""
        if node is None or node.type in SKIP:
            return
        handler = self.statements.get(node.type)
        if handler is not None:
            handler(self, node)
        elif node.type in _CASES:  # one case of a switch or a match: an arm of its own
            self.branch(*node.named_children)
        elif node.type in _BLOCKS or node.type.endswith("statement"):
            self.children(node)
        else:
            self.expr(node)

    def children(self, node: Node) -> None:
        for child in node.named_children:
            self.stmt(child)

    def branch(self, *nodes: Node | None) -> None:
        """Statements that may not run, in one arm."""
        with self.arm():
            for node in nodes:
                self.stmt(node)

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
        elif decided is False:
            self.alternatives(alternatives)
        else:
            self.branches(condition, consequence, alternatives)

    def branches(
        self, condition: Node | None, consequence: Node | None, alternatives: Sequence[Node]
    ) -> None:
        """An ``if`` whose condition is not known: each side from the state before it, with what the condition
        proves where it holds and where it fails; after it, each name holds what either side left it (``if not
        allowed(x): x = "/"`` leaves ``x`` safe), or only what the other side left when one side never comes
        back (``if not name.isdigit(): abort(400)`` leaves ``name`` checked after it)."""
        start = dict(self.env)

        def then() -> None:
            self.guard(condition, True)
            self.stmt(consequence)

        def otherwise() -> None:
            self.guard(condition, False)
            self.alternatives(alternatives)

        then_env, then_set = self.side(start, then)
        else_env, else_set = self.side(start, otherwise)
        self.join_sides(Sides(start, then_env, then_set, else_env, else_set), exits(consequence, self.parts))

    def guard(self, condition: Node | None, holds: bool) -> None:
        """Clear, for the operations the vocabulary's validators prove, each variable ``condition`` checks."""
        for name, (operations, subject) in validated(
            self.vocab, self.parts, self.made_by, condition, holds
        ).items():
            element = is_element(subject)  # ``$octet[0]``: tracked apart from its variable from here
            value = self.expr(subject) if element else self.env.get(name)
            if value is not None:
                if element:
                    self.track_element(name, value)
                cleared = replace(value, cleared=value.cleared | operations)
                self.assign(name, cleared)  # kept, cleared: a sink it reaches is a guarded one

    def track_element(self, name: str, value: Taint) -> None:
        """Track an element a condition validated by its text from here (``paths``); before this arm it was
        what its variable was."""
        if name not in self.paths:
            self.paths.add(name)
            if self.arms:
                self.arms[-1].setdefault(name, value)

    def try_statement(self, node: Node) -> None:
        for child in node.named_children:
            if child.type in _HANDLERS:
                self.branch(child)
            else:
                self.stmt(child)

    def return_statement(self, node: Node) -> None:
        for child in node.named_children:
            value = self.expr(child)
            self.returns = join_taints(self.returns, value)
            if self.page is not None and value is not None:  # a route's return value is the page it serves
                line = node.start_point.row + 1
                self.flow("html_output", "route.return", line, "return (the page)", value, self.page)

    def plain_loop(self, node: Node) -> None:
        self.loop(*node.named_children)

    # -- expressions -----------------------------------------------------------------------------
    def expr(self, node: Node | None) -> Taint | None:
        """The taint an expression carries (sinks inside it are recorded on the way)."""
        if node is None or node.type in _INERT:
            return None
        if node.type == "identifier":
            return self.env.get(node_text(node))
        if self.paths and (key := node_text(node)) in self.paths:  # an element a condition validated
            value = self.env.get(key)
            return value
        handler = self.expressions.get(node.type)
        if handler is not None:
            return handler(self, node)
        return join_taints(*(self.expr(child) for child in node.named_children))

    def ternary(self, node: Node) -> Taint | None:
        """``c ? a : b`` (Java, JavaScript): the branch a known condition takes, else both."""
        condition = node.child_by_field_name("condition")
        self.expr(condition)
        decided = self.const(condition)
        if isinstance(decided, bool):
            return self.expr(node.child_by_field_name("consequence" if decided else "alternative"))
        return join_taints(
            self.expr(node.child_by_field_name("consequence")),
            self.expr(node.child_by_field_name("alternative")),
        )

    def nothing(self, node: Node) -> Taint | None:
        return None

    def member(self, node: Node) -> Taint | None:
        """A member read (``a.b``, ``a[i]``; Python and JavaScript): a source the vocabulary names, else its
        base's taint (an index is read on the way)."""
        found = self.attribute_source(node)
        if found is not None:
            return found
        for index in (*node.children_by_field_name("subscript"), *node.children_by_field_name("index")):
            self.expr(index)
        return self.expr(node.child_by_field_name("value") or node.child_by_field_name("object"))

    def attribute_source(self, node: Node) -> Taint | None:
        """``request.args``, ``os.environ[...]``: an attribute read the vocabulary names as a source."""
        indexed = node.type in ("subscript", "subscript_expression")  # the base of ``x[...]``
        dotted = node_text(
            (node.child_by_field_name("value") or node.child_by_field_name("object")) if indexed else node
        )
        for source in self.vocab.sources:
            for attribute in source.attributes:
                if dotted == attribute or dotted.startswith((attribute + ".", attribute + "[")):
                    return self.read_source(source, node, dotted)
        return None

    def read_source(self, source: Entry, node: Node, dotted: str) -> Taint:
        """The input a member read of a source brings (``dotted``: as written)."""
        # read off a parameter (a Django view's or an Express handler's ``request``), it is input without the
        # prior: the prior only names objects that are not already tainted
        tag = None if self._base(node) in self.env else source.tag
        return Taint(source.kind, node.start_point.row + 1, tag=tag, what=dotted[:60])

    # -- calls -----------------------------------------------------------------------------------
    def call(self, node: Node, name: str, obj: Node | None, args: Sequence[Node]) -> Taint | None:
        """A call: a source, a container access, a sink, a same-file function, a sanitiser, or plain flow."""
        if obj is not None and obj.type in self.members:
            found = self.attribute_source(obj)
            if found is not None:
                return found  # request.args.get("x"), os.environ.get("X")
        call = self.read_call(node, name, obj, args)
        source = self.source_call(call)
        return source if source is not None else self.call_result(call)

    def call_result(self, call: Call) -> Taint | None:
        """What a call that reads no source hands back: a followed container's element, nothing from a sink,
        else what passes through it."""
        held = self.container(call.name, call.obj, call.args, call.values)
        if held is not UNHANDLED:
            return held  # type: ignore[return-value]
        if not call.own and self.sink_call(call):
            return None  # what the sink hands back is not the input (a file opened by a tainted name)
        return self.passed_through(call)

    def read_call(self, node: Node, name: str, obj: Node | None, args: Sequence[Node]) -> Call:
        """The call as written, its receiver's and arguments' taint read in order."""
        # a bare call of a name taken from a module is that module's (``from os import remove``)
        receiver_text = node_text(obj) if obj is not None else self.imported.get(name, "")
        receiver = self.expr(obj) if obj is not None else None
        values = [self.expr(a) for a in args]
        return Call(node, name, obj, args, receiver_text, receiver, values, self.own_call(name, obj))

    def own_call(self, name: str, obj: Node | None) -> bool:
        """Whether a call is a bare call of this file's own function, or of a parameter or local: not the
        library's of that name."""
        return obj is None and (name in self.defined or name in self.env)

    def source_call(self, call: Call) -> Taint | None:
        """The input a call reads, if it is a source the vocabulary names."""
        source = None if call.own else self.call_source(call.name, call.receiver_text, call.line)
        if source is None or call.receiver is None:
            return source
        # a request object that is already tainted (a parameter) taints without the prior; the prior only adds
        # the names it knows for objects that are not
        return replace(source, tag=None)

    def passed_through(self, call: Call) -> Taint | None:
        """What a call that is no source, container or sink hands back: what a same-file function returns of
        its arguments, what a sanitiser guards, else the join of its receiver and arguments."""
        summary = self.summaries.get(call.name) if self.local(call.obj) else None
        if summary is not None:
            self.summary_flows(summary, call.values, call.line, call.where)
        self.mutated(call)
        cleared = self.sanitised(call)
        if cleared:
            return _sanitised_value(call, cleared)
        if summary is not None:
            return _returned(summary, call.values)
        return join_taints(call.receiver, *call.values)

    def sanitised(self, call: Call) -> frozenset[str]:
        """The operations a call guards against, as the vocabulary's sanitisers name them."""
        return frozenset().union(
            *(
                e.operations
                for e in self.vocab.sanitizers
                if self.sanitises(e, call.name, call.receiver_text, call.node)
            )
        )

    @staticmethod
    def sanitises(entry: Entry, name: str, receiver_text: str, node: Node) -> bool:
        """Whether a call is this sanitiser (one with ``call_text`` only when the call's text matches it)."""
        if not entry.applies(name, receiver_text):
            return False
        return entry.call_text is None or bool(entry.call_text.search(node_text(node)))

    def mutated(self, call: Call) -> None:
        """A mutator (``list.append(x)``) stores its arguments' taint in its receiver."""
        if call.name in self.vocab.mutators and call.obj is not None:
            self.store_in_base(call.obj, join_taints(*call.values))

    def call_source(self, name: str, receiver_text: str, line: int) -> Taint | None:
        what = (f"{receiver_text}.{name}" if receiver_text else name)[:60]
        for source in self.vocab.sources:
            if source.names and source.applies(name, receiver_text):
                return Taint(source.kind, line, tag=source.tag, what=what)
            if self.members and f"{receiver_text}.{name}" in source.attributes:
                return Taint(source.kind, line, tag=source.tag, what=what)
        return None

    def container(
        self, name: str, obj: Node | None, args: Sequence[Node], values: list[Taint | None]
    ) -> object:
        """A list or map built in this function and used with literal indexes and keys stays precise."""
        if not self.followed(obj):
            return UNHANDLED
        var = node_text(obj)
        if name in _READ_ONLY:
            return None
        return self.container_op(var, name, args, values)

    def followed(self, obj: Node | None) -> bool:
        """Whether a receiver is a local list or map followed element by element."""
        return obj is not None and obj.type == "identifier" and node_text(obj) in self.slots

    def container_op(self, var: str, name: str, args: Sequence[Node], values: list[Taint | None]) -> object:
        """An operation that may change a followed container: followed outside any arm (a ``get`` in one
        too); one that is not followed drops the container (``UNHANDLED``)."""
        if not self.weak or name == "get":
            handled = self.slot_op(var, name, [self.const(a) for a in args], values)
            if handled is not UNHANDLED:
                return handled
        del self.slots[var]  # changed in a way not followed element by element
        return UNHANDLED

    def slot_op(self, var: str, name: str, keys: list[object], values: list[Taint | None]) -> object:
        """One access to a followed list or map; ``UNHANDLED`` when it cannot be followed."""
        slot = self.slots[var]
        op = list_op if isinstance(slot, list) else map_op
        handled = op(slot, name, keys, values)  # type: ignore[arg-type]
        if handled is not UNHANDLED and name in ("add", "addLast", "append", "offer", "put") and values:
            self.assign(var, values[-1], join=True)
        return handled


def _sanitised_value(call: Call, cleared: frozenset[str]) -> Taint | None:
    """What a sanitiser's call hands back: its receiver's and arguments' taint, cleared for the operations
    it guards (a guarded sink later, not no sink)."""
    value = join_taints(call.receiver, *call.values)
    if value is None:
        return None
    return replace(value, cleared=value.cleared | cleared)


def _returned(summary: Summary, values: list[Taint | None]) -> Taint | None:
    """What a same-file function hands back of its arguments' taint."""
    reached = join_taints(*(values[i] for i in summary.returns if i < len(values)))
    return replace(reached, via_call=True) if reached is not None else None


Statement = Callable[[Any, Node], None]
Expression = Callable[[Any, Node], Taint | None]
_INERT = SKIP | LITERALS
"""Nodes that carry no taint: literals, and nested functions and classes (walked on their own)."""
_READ_ONLY = frozenset({"size", "isEmpty", "containsKey", "contains", "length", "__len__"})
_CASES = frozenset(
    {
        "switch_block_statement_group",
        "switch_rule",
        "case_clause",
        "case_statement",
        "default_statement",
        "switch_case",
        "switch_default",
    }
)
_HANDLERS = frozenset(
    {"catch_clause", "finally_clause", "except_clause", "else_clause", "except_group_clause"}
)
_BLOCKS = frozenset(
    {
        "block",
        "switch_block",
        "switch_body",
        "catch_clause",
        "finally_clause",
        "constructor_body",
        "expression_statement",
        "resource_specification",
        "elif_clause",
        "else_clause",
        "except_clause",
        "module",
    }
)

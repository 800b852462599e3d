"""PHP's statements and expressions for the taint tracker's walk (``_taint_tracker``).

A variable is a ``variable_name`` (``$id``); the superglobals the vocabulary lists as ``attributes``
(``$_GET``, ``$_POST``…) are sources wherever they are read, an index or a property read off a variable
carries its taint. What the language does without a call is a sink of its own: ``echo`` and ``print``
write the page, backticks run a shell (as ``shell_exec``), ``include``/``require`` load a file as code. A
closure is a function of its own (walked on its own), and a file's code outside any function is walked as
one more function (``GLOBAL``): much PHP is a script read top to bottom.
"""

from __future__ import annotations

from collections.abc import Sequence

from tree_sitter import Node

from ouroboros_gates.decider.instruments._taint_model import Taint, join_taints, node_text
from ouroboros_gates.decider.instruments._taint_tracker import Expression, Statement, Tracker

__all__ = ["PhpTracker", "php_parameter"]

_NUMERIC_CASTS = frozenset({"int", "integer", "float", "double", "bool", "boolean"})
_CLIENT_KEYS = frozenset(
    {
        "REQUEST_URI",
        "QUERY_STRING",
        "PHP_SELF",
        "PATH_INFO",
        "PATH_TRANSLATED",
        "ORIG_PATH_INFO",
        "REDIRECT_URL",
        "REDIRECT_QUERY_STRING",
        "SCRIPT_URI",
        "PHP_AUTH_USER",
        "PHP_AUTH_PW",
        "PHP_AUTH_DIGEST",
        "CONTENT_TYPE",
        "argv",
    }
)
"""The keys of ``$_SERVER`` a request sets (with every ``HTTP_*`` header); the rest are the server's."""
_STORES = frozenset({"array_push", "array_unshift"})
_OWN_RECEIVERS = frozenset({"$this", "self", "static", "parent"})
_ACCESSES = frozenset(
    {"subscript_expression", "member_access_expression", "nullsafe_member_access_expression"}
)
_INCLUDES = {
    "include_expression": "include",
    "include_once_expression": "include_once",
    "require_expression": "require",
    "require_once_expression": "require_once",
}


def php_parameter(node: Node) -> list[str]:
    """The name a parameter binds (``$id`` of ``int $id = 0``, ``...$rest``, a promoted ``private $x``)."""
    named = node.child_by_field_name("name")
    return [node_text(named)] if named is not None else []


def _arguments(node: Node) -> list[Node]:
    """A call's argument expressions (a named argument's value; ``...$args`` as itself)."""
    args = _argument_list(node)
    return [
        _argument_value(a) for a in (args.named_children if args is not None else []) if a.type != "comment"
    ]


def _argument_list(node: Node) -> Node | None:
    """A call's ``arguments`` node (a field of some calls, a plain child of others)."""
    return node.child_by_field_name("arguments") or next(
        (child for child in node.named_children if child.type == "arguments"), None
    )


def _argument_value(argument: Node) -> Node:
    """The expression an argument passes (the value of ``name: $value``)."""
    return (
        argument.named_children[-1] if argument.type == "argument" and argument.named_children else argument
    )


def _object(node: Node) -> Node | None:
    """What an index or a property is read off: the ``object`` field, else the first child."""
    return node.child_by_field_name("object") or (node.named_children[0] if node.named_children else None)


def _by_value(bound: Node) -> Node:
    """A ``foreach`` target through ``&`` (``&$row`` binds ``$row``)."""
    return bound.named_children[0] if bound.type == "by_ref" and bound.named_children else bound


def _bound(target: Node) -> list[Node]:
    """What one ``foreach`` target binds: the key and the value of ``$k => $v``, else the target itself."""
    return [_by_value(bound) for bound in (target.named_children if target.type == "pair" else [target])]


class PhpTracker(Tracker):
    """The walk over a PHP function body (or a file's top-level code)."""

    def local(self, obj: Node | None) -> bool:
        """No receiver, ``$this``, or ``self::``/``static::``/``parent::``."""
        return obj is None or node_text(obj) in _OWN_RECEIVERS

    def alternatives(self, alternatives: Sequence[Node]) -> None:
        for alternative in alternatives:  # each ``elseif`` and the ``else`` an arm of its own
            with self.arm():
                if alternative.type == "else_if_clause":
                    self.expr(alternative.child_by_field_name("condition"))
                self.stmt(alternative.child_by_field_name("body"))

    def _base(self, node: Node | None) -> str | None:
        """The variable an lvalue or a receiver is rooted at (``$a`` of ``$a['k']->b[]``)."""
        while node is not None:
            if node.type == "variable_name":
                return node_text(node)
            if node.type not in _ACCESSES:
                return None
            node = _object(node)
        return None

    # -- statements ------------------------------------------------------------------------------
    def php_if(self, node: Node) -> None:
        condition = node.child_by_field_name("condition")
        self.expr(condition)
        self.branches(condition, node.child_by_field_name("body"), node.children_by_field_name("alternative"))

    def foreach(self, node: Node) -> None:
        """``foreach ($rows as $k => $v)``: each turn binds the key and the value to part of what is
        iterated."""
        parts = [child for child in node.named_children if child != node.child_by_field_name("body")]
        value = self.expr(parts[0]) if parts else None
        with self.arm():
            self._bind_targets(parts[1:], value)
            self.loop(node.child_by_field_name("body"))

    def _bind_targets(self, targets: Sequence[Node], value: Taint | None) -> None:
        """Each variable the ``as`` targets bind gets the taint of what is iterated."""
        for target in targets:
            for bound in _bound(target):
                name = self._base(bound)
                if name is not None:
                    self.assign(name, value)

    def echo(self, node: Node) -> None:
        """``echo a, b;``: each value written to the page."""
        values = _listed(node)
        self.sinks("echo", ("",), [self.expr(v) for v in values], values, node.start_point.row + 1, "echo")

    # -- expressions -----------------------------------------------------------------------------
    def variable(self, node: Node) -> Taint | None:
        """A variable's taint, or a superglobal the vocabulary names as a source."""
        name = node_text(node)
        for source in self.vocab.sources:
            if name in source.attributes:
                return Taint(source.kind, node.start_point.row + 1, tag=source.tag)
        return self.env.get(name)

    def element(self, node: Node) -> Taint | None:
        """``$a['k']``, ``$a->b``: the base's taint (an index is read on the way); of ``$_SERVER`` only the
        keys the client writes (``HTTP_*``, ``REQUEST_URI``…), not the server's own (``DOCUMENT_ROOT``)."""
        children = node.named_children
        base = _object(node)
        if self._server_own_read(base, children):
            return None
        if node.type == "subscript_expression":
            self._read_indices(children, base)
        return self.expr(base)

    def _server_own_read(self, base: Node | None, children: Sequence[Node]) -> bool:
        """``$_SERVER['DOCUMENT_ROOT']``: a read of a key the server sets itself."""
        server = base is not None and node_text(base) == "$_SERVER" and len(children) == 2
        return server and self.server_own(children[1])

    def _read_indices(self, children: Sequence[Node], base: Node | None) -> None:
        """The index of ``$a[$i]`` is read on the way to the element."""
        for child in children:
            if child != base:
                self.expr(child)

    def server_own(self, key: Node) -> bool:
        """A ``$_SERVER`` key the server sets itself (a constant key that is not the client's)."""
        value = self.const(key)
        return isinstance(value, str) and not value.startswith("HTTP_") and value not in _CLIENT_KEYS

    def parts(self, node: Node) -> tuple[str, Node | None, Sequence[Node]] | None:
        split = _CALL_PARTS.get(node.type)
        return split(node) if split is not None else None

    def function_call(self, node: Node) -> Taint | None:
        found = self.parts(node)
        if found is None:
            return self._dynamic_call(node)
        name, _, args = found
        value = self.call(node, name, None, args)
        if name in _STORES and args:  # ``array_push($list, $x)``: the list holds $x from now on
            self._pushed(args)
        return value

    def _dynamic_call(self, node: Node) -> Taint | None:
        """``$handler(...)``: a dynamic call names nothing the vocabulary knows; its arguments go through."""
        self.expr(node.child_by_field_name("function"))
        return join_taints(*(self.expr(a) for a in _arguments(node)))

    def _pushed(self, args: Sequence[Node]) -> None:
        """``array_push($list, $x, ...)``: the list joins the taint of what is pushed."""
        stored, base = join_taints(*(self.expr(a) for a in args[1:])), self._base(args[0])
        if stored is not None and base is not None:
            self.assign(base, stored, join=True)

    def method_call(self, node: Node) -> Taint | None:
        """``$obj->m(...)``, ``$obj?->m(...)``, ``Cls::m(...)``."""
        name, obj, args = self.parts(node) or ("", None, [])
        return self.call(node, name, obj, args)

    def creation(self, node: Node) -> Taint | None:
        """``new Cls(...)``: a call of the class's name."""
        named = next((c for c in node.named_children if c.type in ("name", "qualified_name")), None)
        return self.call(node, node_text(named).rsplit("\\", 1)[-1], None, _arguments(node))

    def assignment(self, node: Node) -> Taint | None:
        right = node.child_by_field_name("right")
        value = self.expr(right)
        left = node.child_by_field_name("left")
        if left is None:
            return value
        if node.type == "augmented_assignment_expression":
            self._appended(left, value)
        elif left.type == "variable_name":
            self.bind(node_text(left), right, value)
        elif left.type == "list_literal":
            self._unpacked(left, value)
        else:
            self._stored(left, value)
        return value

    def _appended(self, left: Node, value: Taint | None) -> None:
        """``$q .= $input``: the variable joins the value's taint."""
        base = self._base(left)
        if base is not None:
            self.assign(base, value, join=True)

    def _unpacked(self, left: Node, value: Taint | None) -> None:
        """``[$a, $b] = ...``, ``list($a, $b) = ...``: each variable gets the whole value."""
        for name in (node_text(v) for v in _variables(left)):
            self.assign(name, value)

    def _stored(self, left: Node, value: Taint | None) -> None:
        """``$a['k'] = $x``, ``$a[] = $x``, ``$o->p = $x``: the container holds the value from now on."""
        base = self._base(left)
        if base is not None and value is not None:
            self.assign(base, value, join=True)

    def cast(self, node: Node) -> Taint | None:
        """``(int) $x`` is a number, safe for every operation; other casts keep the taint."""
        value = self.expr(node.child_by_field_name("value"))
        return None if node_text(node.child_by_field_name("type")).lower() in _NUMERIC_CASTS else value

    def backticks(self, node: Node) -> Taint | None:
        """`` `ls $dir` `` runs a shell, as ``shell_exec`` does."""
        value = join_taints(*(self.expr(child) for child in node.named_children))
        self.sinks("shell_exec", ("",), [value], [node], node.start_point.row + 1, "`...`")
        return None

    def inclusion(self, node: Node) -> Taint | None:
        """``include $page;``: the file is loaded and run as code."""
        children = node.named_children
        value = join_taints(*(self.expr(child) for child in children))
        name = _INCLUDES[node.type]
        self.sinks(name, ("",), [value], children[:1] or [node], node.start_point.row + 1, name)
        return None

    def printed(self, node: Node) -> Taint | None:
        """``print $x`` writes the page, as ``echo`` does."""
        children = node.named_children
        self.sinks(
            "print", ("",), [self.expr(c) for c in children], children, node.start_point.row + 1, "print"
        )
        return None


def _listed(node: Node) -> list[Node]:
    """The values of ``echo a, b, c`` (the grammar nests them as sequences)."""
    found = []
    for child in node.named_children:
        if child.type == "sequence_expression":
            found.extend(_listed(child))
        elif child.type != "comment":
            found.append(child)
    return found


def _function_parts(node: Node) -> tuple[str, Node | None, Sequence[Node]] | None:
    """``f(...)``, ``\\ns\\f(...)``: the function's own name (None for a dynamic ``$f(...)``)."""
    function = node.child_by_field_name("function")
    if function is not None and function.type in ("name", "qualified_name"):
        return node_text(function).rsplit("\\", 1)[-1], None, _arguments(node)
    return None


def _method_parts(node: Node) -> tuple[str, Node | None, Sequence[Node]] | None:
    """``$obj->m(...)``, ``$obj?->m(...)``, ``Cls::m(...)``: the method's name and its receiver."""
    obj = node.child_by_field_name("object") or node.child_by_field_name("scope")
    return node_text(node.child_by_field_name("name")), obj, _arguments(node)


_CALL_PARTS = {
    "function_call_expression": _function_parts,
    "member_call_expression": _method_parts,
    "nullsafe_member_call_expression": _method_parts,
    "scoped_call_expression": _method_parts,
}
"""How each kind of call splits into its name, its receiver and its arguments."""


def _variables(node: Node) -> list[Node]:
    found = [node] if node.type == "variable_name" else []
    for child in node.named_children:
        found.extend(_variables(child))
    return found


_STATEMENTS: dict[str, Statement] = {
    "compound_statement": PhpTracker.children,
    "colon_block": PhpTracker.children,
    "if_statement": PhpTracker.php_if,
    "foreach_statement": PhpTracker.foreach,
    "for_statement": PhpTracker.plain_loop,
    "while_statement": PhpTracker.plain_loop,
    "do_statement": PhpTracker.plain_loop,
    "switch_statement": PhpTracker.plain_loop,
    "try_statement": PhpTracker.try_statement,
    "return_statement": PhpTracker.return_statement,
    "echo_statement": PhpTracker.echo,
}
_EXPRESSIONS: dict[str, Expression] = {
    "variable_name": PhpTracker.variable,
    "subscript_expression": PhpTracker.element,
    "member_access_expression": PhpTracker.element,
    "nullsafe_member_access_expression": PhpTracker.element,
    "function_call_expression": PhpTracker.function_call,
    "member_call_expression": PhpTracker.method_call,
    "nullsafe_member_call_expression": PhpTracker.method_call,
    "scoped_call_expression": PhpTracker.method_call,
    "object_creation_expression": PhpTracker.creation,
    "assignment_expression": PhpTracker.assignment,
    "reference_assignment_expression": PhpTracker.assignment,
    "augmented_assignment_expression": PhpTracker.assignment,
    "cast_expression": PhpTracker.cast,
    "shell_command_expression": PhpTracker.backticks,
    "print_intrinsic": PhpTracker.printed,
    "anonymous_function": PhpTracker.nothing,
    **dict.fromkeys(_INCLUDES, PhpTracker.inclusion),
}
PhpTracker.statements, PhpTracker.expressions = _STATEMENTS, _EXPRESSIONS

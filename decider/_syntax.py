"""The tree walker behind ``languages``: functions, parameters, calls and assignments of one tree.

One walker serves every language; a ``_Grammar`` names the node types that differ between grammars.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from tree_sitter import Node

__all__ = ["GLOBAL", "GRAMMARS", "Call", "Function", "Walker", "simple_name"]

GLOBAL = "<global>"
"""The function name of code outside any function."""


def simple_name(qualified: str) -> str:
    """The name calls use: the last segment, without the ``#n`` of a second definition or overload."""
    return qualified.rsplit(".", 1)[-1].split("#", 1)[0]


@dataclass(frozen=True)
class _Grammar:
    """Node types per role, each given as one space-separated string."""

    functions: frozenset[str]
    scopes: frozenset[str]
    calls: frozenset[str]
    assignments: frozenset[str]
    identifiers: frozenset[str] = frozenset({"identifier"})
    skip_in_params: frozenset[str] = frozenset({"type", "type_annotation"})
    receiver: bool = False  # a method's first parameter is the instance (Python's self), not data

    @classmethod
    def of(
        cls, functions: str, scopes: str, calls: str, assignments: str, identifiers: str = "identifier"
    ) -> _Grammar:
        """A grammar from space-separated node type lists."""
        return cls(
            functions=frozenset(functions.split()),
            scopes=frozenset(scopes.split()),
            calls=frozenset(calls.split()),
            assignments=frozenset(assignments.split()),
            identifiers=frozenset(identifiers.split()),
        )


_JS = _Grammar.of(
    "function_declaration function_expression function arrow_function method_definition"
    " generator_function_declaration generator_function",
    "class_declaration class abstract_class_declaration",
    "call_expression new_expression",
    "variable_declarator assignment_expression augmented_assignment_expression",
    "identifier shorthand_property_identifier_pattern",
)
_C = _Grammar.of(
    "function_definition",
    "class_specifier struct_specifier namespace_definition",
    "call_expression",
    "init_declarator assignment_expression",
)
GRAMMARS: dict[str, _Grammar] = {
    "python": replace(
        _Grammar.of("function_definition", "class_definition", "call", "assignment augmented_assignment"),
        receiver=True,
    ),
    "javascript": _JS,
    "typescript": _JS,
    "java": _Grammar.of(
        "method_declaration constructor_declaration lambda_expression",
        "class_declaration interface_declaration enum_declaration",
        "method_invocation object_creation_expression",
        "variable_declarator assignment_expression",
    ),
    "php": _Grammar.of(
        "function_definition method_declaration anonymous_function arrow_function",
        "class_declaration trait_declaration interface_declaration",
        "function_call_expression member_call_expression scoped_call_expression object_creation_expression",
        "assignment_expression augmented_assignment_expression",
        "variable_name",
    ),
    "c": _C,
    "cpp": _C,
}

_NAME = re.compile(r"[A-Za-z_$][\w$]*$")
_LITERAL_ONLY = frozenset({"true", "false", "null", "none", "True", "False", "None", "undefined", "this"})


@dataclass(frozen=True)
class Call:
    """One call site: the callee as written (dots for member access), its simple name and its arguments."""

    callee: str
    name: str
    line: int
    args: tuple[frozenset[str], ...]
    constant: tuple[bool, ...]

    def reads(self, index: int) -> frozenset[str]:
        """Identifiers in argument ``index`` (``-1``: in any argument)."""
        if index < 0:
            return frozenset().union(*self.args)
        return self.args[index] if index < len(self.args) else frozenset()

    def constant_at(self, index: int) -> bool:
        """Whether argument ``index`` (``-1``: every argument) is a literal with no identifier or call."""
        if index < 0:
            return all(self.constant)
        return self.constant[index] if index < len(self.constant) else True


@dataclass(frozen=True)
class Function:
    """A function (or ``<global>``) of one file, with what it calls and how its locals are derived."""

    name: str
    start_line: int
    end_line: int
    params: tuple[str, ...]
    calls: tuple[Call, ...]
    assignments: tuple[tuple[frozenset[str], frozenset[str]], ...]
    decorated: bool = False

    @property
    def simple(self) -> str:
        """The name its callers use (see ``simple_name``)."""
        return simple_name(self.name)

    @property
    def is_global(self) -> bool:
        """True for the code outside any function."""
        return self.name == GLOBAL


@dataclass
class _Frame:
    node: Node
    name: str
    params: tuple[str, ...]
    decorated: bool
    calls: list[Call] = field(default_factory=list)
    assignments: list[tuple[frozenset[str], frozenset[str]]] = field(default_factory=list)


class Walker:
    """One pass over a tree collecting functions (qualified by enclosing scopes), calls and assignments."""

    def __init__(self, grammar: _Grammar) -> None:
        self.grammar = grammar
        self.frames: list[_Frame] = []
        self.global_calls: list[Call] = []
        self.global_assignments: list[tuple[frozenset[str], frozenset[str]]] = []
        self._anonymous: dict[str, int] = {}
        self._defined: dict[str, int] = {}

    def visit(self, node: Node, scope: tuple[str, ...], frame: _Frame | None) -> None:
        stack: list[tuple[Node, tuple[str, ...], _Frame | None]] = [(node, scope, frame)]
        while stack:
            current, where, owner = stack.pop()
            kind = current.type
            if kind in self.grammar.functions:
                owner = self._open(current, where)
                where = (*where, owner.name.rsplit(".", 1)[-1])
            elif kind in self.grammar.scopes:
                where = (*where, self._name(current) or "<anonymous>")
            else:
                self._record(current, owner)
            stack.extend((child, where, owner) for child in reversed(current.named_children))

    def _record(self, node: Node, owner: _Frame | None) -> None:
        """A call or an assignment, in the function it is in (or the file's top level)."""
        if node.type in self.grammar.calls:
            (owner.calls if owner else self.global_calls).append(self._call(node))
        elif node.type in self.grammar.assignments:
            pair = self._assignment(node)
            if pair is not None:
                (owner.assignments if owner else self.global_assignments).append(pair)

    def build(self, frame: _Frame) -> Function:
        return Function(
            name=frame.name,
            start_line=frame.node.start_point.row + 1,
            end_line=frame.node.end_point.row + 1,
            params=frame.params,
            calls=tuple(frame.calls),
            assignments=tuple(frame.assignments),
            decorated=frame.decorated,
        )

    def _open(self, node: Node, scope: tuple[str, ...]) -> _Frame:
        name = self._qualified(node, scope)
        frame = _Frame(node=node, name=name, params=self._own_params(node), decorated=_decorated(node))
        self.frames.append(frame)
        return frame

    def _qualified(self, node: Node, scope: tuple[str, ...]) -> str:
        """A function's name within its scope, unique in the file (anonymous ones and repeats numbered)."""
        own = self._name(node)
        prefix = ".".join(scope)
        if own is None:
            count = self._anonymous.get(prefix, 0) + 1
            self._anonymous[prefix] = count
            own = "<anonymous>" if count == 1 else f"<anonymous#{count}>"
        name = f"{prefix}.{own}" if prefix else own
        repeat = self._defined.get(name, 0) + 1
        self._defined[name] = repeat
        if repeat > 1:
            name = f"{name}#{repeat}"  # an overload or a redefinition keeps its own candidate key
        return name

    def _own_params(self, node: Node) -> tuple[str, ...]:
        """A function's parameter names, sorted (a method's receiver left out where the grammar has one)."""
        params_node = _params_node(node)
        if params_node is None:
            return ()
        found = self._params(params_node)
        if self._has_receiver(node, params_node):
            found -= self._params(params_node.named_children[0])
        return tuple(sorted(found))

    def _has_receiver(self, node: Node, params_node: Node) -> bool:
        """Whether the first parameter is a method's receiver (Python's ``self`` or ``cls``)."""
        return bool(self.grammar.receiver and params_node.named_children and _in_class(node))

    def _name(self, node: Node) -> str | None:
        named = node.child_by_field_name("name")
        if named is not None:
            return _text(named)
        declarator = _function_declarator(node)
        if declarator is not None:
            return _declarator_name(declarator)
        return _assigned_name(node.parent)

    def _params(self, node: Node) -> set[str]:
        found: set[str] = set()
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in self.grammar.skip_in_params:
                continue
            if current.type in self.grammar.identifiers:
                found.add(_text(current))
                continue
            for index, child in enumerate(current.children):
                if current.field_name_for_child(index) in {"value", "right", "default_value", "type"}:
                    continue
                stack.append(child)
        return found

    def _idents(self, node: Node | None) -> frozenset[str]:
        if node is None:
            return frozenset()
        found: set[str] = set()
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in self.grammar.identifiers:
                text = _text(current)
                if text not in _LITERAL_ONLY:
                    found.add(text)
                continue
            for index, child in enumerate(current.children):
                if child.is_named and current.field_name_for_child(index) != "name":
                    stack.append(child)
        return frozenset(found)

    def _call(self, node: Node) -> Call:
        callee = _callee(node)
        match = _NAME.search(callee.rstrip(")"))
        positional = _positional(node)
        reads = tuple(self._idents(arg) for arg in positional)
        return Call(
            callee=callee,
            name=match.group(0) if match else callee,
            line=node.start_point.row + 1,
            args=reads,
            constant=self._constant(positional, reads),
        )

    def _constant(self, positional: Sequence[Node], reads: Sequence[frozenset[str]]) -> tuple[bool, ...]:
        """Per argument, whether it is a constant: it reads no name and calls nothing."""
        return tuple(
            not read and not _has_call(arg, self.grammar) for arg, read in zip(positional, reads, strict=True)
        )

    def _assignment(self, node: Node) -> tuple[frozenset[str], frozenset[str]] | None:
        left = node.child_by_field_name("left") or node.child_by_field_name("name")
        left = left or node.child_by_field_name("declarator")
        right = node.child_by_field_name("right") or node.child_by_field_name("value")
        if left is None or right is None:
            return None
        return self._idents(left), self._idents(right)


def _positional(node: Node) -> list[Node]:
    """A call's arguments, comments left out."""
    args = node.child_by_field_name("arguments")
    return [child for child in args.named_children if child.type != "comment"] if args else []


def _declarator_name(declarator: Node) -> str | None:
    """A C or C++ function's name from its declarator (``A::f`` as ``A.f``)."""
    inner = declarator.child_by_field_name("declarator")
    return _text(inner).replace("::", ".") if inner is not None else None


def _assigned_name(parent: Node | None) -> str | None:
    """The name an anonymous function is given by what holds it: a variable, an object key, an
    assignment's target; None when it has none."""
    if parent is None or parent.type not in {"variable_declarator", "pair", "assignment_expression"}:
        return None
    target = _holder_target(parent)
    if target is not None and target.type in {"identifier", "property_identifier"}:
        return _text(target)
    return None


def _holder_target(parent: Node) -> Node | None:
    """What names the holder's value: a declarator's name, a pair's key, an assignment's left side."""
    target = parent.child_by_field_name("name") or parent.child_by_field_name("key")
    return target or parent.child_by_field_name("left")


def _params_node(node: Node) -> Node | None:
    """A function's parameter list, found through a C declarator where the grammar puts it there."""
    params_node = node.child_by_field_name("parameters") or node.child_by_field_name("parameter")
    if params_node is None:
        declarator = _function_declarator(node)
        params_node = declarator.child_by_field_name("parameters") if declarator else None
    return params_node


def _callee(node: Node) -> str:
    """What a call calls, as written without spaces and with ``.`` for every member operator."""
    target = node.child_by_field_name("function") or node.child_by_field_name("constructor")
    callee = _text(target) if target is not None else _member(node)
    return re.sub(r"\s+", "", callee).replace("->", ".").replace("::", ".").replace("?.", ".")[:200]


def _member(node: Node) -> str:
    """A call written as a member (``object.name``, ``Scope::name``, ``new Type``), joined with ``.``."""
    holder = node.child_by_field_name("object") or node.child_by_field_name("scope")
    named = node.child_by_field_name("name") or node.child_by_field_name("type")
    return ".".join(_text(part) for part in (holder, named) if part is not None)


def _decorated(node: Node) -> bool:
    """A Python decorator, a Java annotation or a PHP attribute: the function is registered somewhere."""
    if node.parent is not None and node.parent.type == "decorated_definition":
        return True
    return any(_is_annotation(child) for child in node.children)


def _is_annotation(child: Node) -> bool:
    """A PHP attribute list, or Java modifiers that hold an annotation."""
    if child.type == "attribute_list":
        return True
    return child.type == "modifiers" and any("annotation" in m.type for m in child.children)


def _in_class(node: Node) -> bool:
    """Whether a Python function is an instance or class method (defined in a class body, not static)."""
    parent = node.parent
    if parent is not None and parent.type == "decorated_definition":
        if _is_static(parent):
            return False
        parent = parent.parent
    return (
        parent is not None
        and parent.type == "block"
        and getattr(parent.parent, "type", None) == "class_definition"
    )


def _is_static(decorated: Node) -> bool:
    """Whether a decorated definition is a ``@staticmethod``."""
    return any(
        _text(child).strip() == "@staticmethod" for child in decorated.children if child.type == "decorator"
    )


def _function_declarator(node: Node) -> Node | None:
    current = node.child_by_field_name("declarator")
    while current is not None and current.type != "function_declarator":
        current = current.child_by_field_name("declarator")
    return current


def _has_call(node: Node, grammar: _Grammar) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in grammar.calls:
            return True
        stack.extend(current.named_children)
    return False


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")

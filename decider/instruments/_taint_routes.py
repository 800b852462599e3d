"""Which route entries of the vocabulary a function is (see ``taint``): a decorator the vocabulary routes by,
with a path string first (``@app.get("/items/{item_id}")``), or a first parameter it names (a Django view's
``request``); and whether what the route returns is the page it serves."""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from ouroboros_gates.decider.instruments._taint_fold import literal
from ouroboros_gates.decider.instruments._taint_model import Entry, TaintVocabulary, node_text

__all__ = ["route_entries"]


def route_entries(vocab: TaintVocabulary, node: Node, params: list[str]) -> list[tuple[Entry, bool]]:
    """The route entries a function is, each with whether what it returns is the page: a decorator call the
    vocabulary routes by, with a path string first (``@app.get("/items/{item_id}")``, ``@bp.route("/ping")``),
    or a first parameter it names (a Django view's ``request``)."""
    decorators = _decorators(node)
    found = (_route(route, decorators, params) for route in vocab.routes)
    return [route for route in found if route is not None]


def _route(route: Entry, decorators: list[_Decorator], params: list[str]) -> tuple[Entry, bool] | None:
    """The route entry with whether its return is the page, if the function is that route."""
    if route.first_param:
        return (route, False) if params[:1] == [route.first_param] else None
    return _decorated(route, decorators)


def _decorated(route: Entry, decorators: list[_Decorator]) -> tuple[Entry, bool] | None:
    """A route one of the decorators makes; its return is the page when that decorator matches ``html``."""
    hit = next((d for d in decorators if d.routes(route)), None)
    if hit is None:
        return None
    return route, route.html is not None and bool(route.html.search(hit.text))


@dataclass(frozen=True)
class _Decorator:
    """A decorator that calls an attribute (``@app.get("/items")``): the call as written, the attribute,
    its receiver and the literal value of the first argument."""

    text: str
    name: str
    receiver: str
    path: object

    def routes(self, route: Entry) -> bool:
        """Whether this decorator makes its function the route ``route`` names, at a path."""
        return (
            isinstance(self.path, str)
            and self.path.startswith("/")
            and route.applies(self.name, self.receiver)
        )


def _decorators(node: Node) -> list[_Decorator]:
    """The decorators of a function that call an attribute."""
    siblings = node.parent.named_children if node.parent else []
    found = (_decorator(c) for c in siblings if c.type == "decorator")
    return [d for d in found if d is not None]


def _decorator(decorator: Node) -> _Decorator | None:
    """A decorator read, when it calls an attribute (None: any other)."""
    call = _decorator_call(decorator)
    if call is None:
        return None
    function = call.child_by_field_name("function")
    if function is None or function.type != "attribute":
        return None
    return _Decorator(
        node_text(call),
        node_text(function.child_by_field_name("attribute")),
        node_text(function.child_by_field_name("object")),
        _first_argument(call),
    )


def _decorator_call(decorator: Node) -> Node | None:
    """The call a decorator makes (``@app.get("/items")``), if it makes one."""
    call = decorator.named_children[0] if decorator.named_children else None
    return call if call is not None and call.type == "call" else None


def _first_argument(call: Node) -> object:
    """The literal value of a call's first argument (None: no argument, or not a literal)."""
    args = call.child_by_field_name("arguments")
    first = args.named_children[0] if args is not None and args.named_children else None
    return literal(first) if first is not None else None

"""The flows a walk records: the sinks a call is, which of its arguments reach them (or that all it reads
are constants), and the sinks a same-file function's parameters reach (see ``taint``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from tree_sitter import Node

from ouroboros_gates.decider.instruments._taint_env import VECTORS, Walk
from ouroboros_gates.decider.instruments._taint_model import CONSTANT, Entry, Flow, Summary, Taint, node_text

__all__ = ["Call", "SinkWalk"]


@dataclass(frozen=True)
class Call:
    """One call being read: as written, and the taint its receiver and arguments carry."""

    node: Node
    name: str
    obj: Node | None
    args: Sequence[Node]
    receiver_text: str
    receiver: Taint | None
    values: list[Taint | None]
    own: bool
    """A bare call of this file's own function, or of a parameter or local (not the library's)."""

    @property
    def line(self) -> int:
        return self.node.start_point.row + 1

    @property
    def where(self) -> str:
        """The call as a flow names it (``receiver.name``, at most 80 characters)."""
        return (
            f"{self.receiver_text}.{self.name}" if self.obj is not None and self.receiver_text else self.name
        )[:80]


class SinkWalk(Walk):
    """The walk's sinks: each call that is one, and the flow every tainted argument it reads makes."""

    def sink_call(self, call: Call) -> bool:
        """The flows into the sinks a call is; whether what it returns is clean (a sink marked ``clean``)."""
        receivers = self.receivers(call)
        self.sinks(call.name, receivers, call.values, call.args, call.line, call.where, self.call_text(call))
        return any(e.clean and e.applies(call.name, r) for e in self.vocab.sinks for r in receivers)

    def receivers(self, call: Call) -> tuple[str, ...]:
        """The names a call's receiver is known by: as written, by the call that made it, by its module."""
        # a local bound to a call's result is also known by that call (``w = response.getWriter();
        # w.print(x)``)
        made_by = self.made_by.get(call.receiver_text)
        receivers = (call.receiver_text,) if made_by is None else (call.receiver_text, made_by)
        named = call.obj is not None and call.obj.type == "identifier"
        module = self.imported.get(call.receiver_text) if named else None
        if module is not None:  # ``from lxml import etree``: etree is lxml's
            receivers = (*receivers, f"{module}.{call.receiver_text}")
        return receivers

    def call_text(self, call: Call) -> str:
        """The call as written, and what its arguments were made by (``parser = XMLParser(...)``)."""
        return node_text(call.node) + "".join(self.made_by.get(node_text(a), "") for a in call.args)

    def summary_flows(self, summary: Summary, values: list[Taint | None], line: int, where: str) -> None:
        """A same-file function whose parameter reaches a sink: a tainted argument there is a flow here."""
        for index, sinks in summary.sinks.items():
            value = _passed(values, index)
            if value is None:
                continue
            for operation, sink_id, tag in sorted(sinks, key=str):
                self.flow(operation, sink_id, line, where, replace(value, via_call=True), tag)

    def sinks(
        self,
        name: str,
        receivers: tuple[str, ...],
        values: list[Taint | None],
        args: Sequence[Node],
        line: int,
        where: str,
        text: str = "",
    ) -> None:
        """Flows into the sinks this call is (``text``: the call as written, without spaces)."""
        for sink in self.vocab.sinks:
            if any(sink.applies(name, receiver) for receiver in receivers):
                self.sink_flows(sink, values, args, line, where, text)

    def sink_flows(
        self, sink: Entry, values: list[Taint | None], args: Sequence[Node], line: int, where: str, text: str
    ) -> None:
        """Flows into one sink: each tainted argument it reads, or a constant when all it reads are."""
        safe = sink.safe_args is not None and bool(sink.safe_args.search(text))  # ``Loader=yaml.SafeLoader``
        picked = _picked(sink, len(values))
        for i in picked:
            value = values[i]
            if value is None:
                continue
            if self.safe_form(sink, args[i], safe):
                value = replace(value, cleared=value.cleared | {sink.operation})  # a safe form: guarded
            self.flow(sink.operation, sink.id, line, where, value, sink.tag)
        self.constant_flow(sink, values, args, picked, line, where)

    def safe_form(self, sink: Entry, arg: Node, safe: bool) -> bool:
        """Whether a sink reads an argument in a safe form: the call's arguments are safe (``safe``), or the
        argument is an argument vector where the sink takes one."""
        return safe or (sink.argv_safe and self.vector(arg))

    def constant_flow(
        self,
        sink: Entry,
        values: list[Taint | None],
        args: Sequence[Node],
        picked: Sequence[int],
        line: int,
        where: str,
    ) -> None:
        """A guarded flow from a constant when every argument the sink reads is one (none for a sink of
        everyday code, a pattern or a log line: made of constants, it is the norm)."""
        if picked and not sink.external and self.constant_only(values, args, picked):
            constant = Taint(CONSTANT, line, cleared=frozenset({"*"}))
            self.flow(sink.operation, sink.id, line, where, constant, sink.tag)

    def constant_only(self, values: list[Taint | None], args: Sequence[Node], picked: Sequence[int]) -> bool:
        """Whether every argument a sink reads is untainted and a constant."""
        return all(values[i] is None and self.constant_arg(args[i]) for i in picked)

    def constant_arg(self, node: Node) -> bool:
        """Whether an argument is a constant: a literal (a string without interpolation), a local holding one,
        or an expression over them."""
        if self.const(node) is not None:
            return True
        if node.type in _STRINGS:
            return _uninterpolated(node)
        if node.type in _COMPOUNDS:
            return self.constant_parts(node)
        return False

    def constant_parts(self, node: Node) -> bool:
        """Whether an expression over parts (``"a" + B``, ``("x")``) has parts, every one a constant."""
        return bool(node.named_children) and all(self.constant_arg(c) for c in node.named_children)

    def vector(self, node: Node) -> bool:
        """Whether an argument is an argument vector: a list, tuple or array made in place, or a local that
        holds one made in this function (``cmd = ["ls", path]; run(cmd)``), never a string a shell parses."""
        return node.type in VECTORS or (node.type == "identifier" and node_text(node) in self.vectors)

    def flow(self, operation: str, sink: str, line: int, call: str, value: Taint, tag: str | None) -> None:
        """Record that ``value`` reached the sink ``sink`` (of ``operation``) at ``line``."""
        self.flows.append(
            Flow(
                self.name,
                operation,
                sink,
                line,
                call,
                value.kind,
                value.line,
                sanitized=not value.reaches(operation),
                via_call=value.via_call,
                tags=_priors(value, tag),
                route=value.tag if value.route else None,
                source=value.what,
                steps=_steps_before(value, line),
            )
        )


def _passed(values: list[Taint | None], index: int) -> Taint | None:
    """The taint of the argument at ``index`` (None: untainted, or not passed)."""
    return values[index] if index < len(values) else None


def _priors(value: Taint, tag: str | None) -> tuple[str, ...]:
    """The priors a flow depends on: its source's and its sink's, sorted."""
    return tuple(sorted({t for t in (value.tag, tag) if t is not None}))


def _steps_before(value: Taint, line: int) -> tuple[int, ...]:
    """The assignment lines a taint went through, but the sink's own."""
    return tuple(n for n in value.steps if n != line)


def _uninterpolated(node: Node) -> bool:
    """A string literal with nothing interpolated into it."""
    return not any(c.type in _INTERPOLATIONS for c in node.named_children)


def _picked(sink: Entry, count: int) -> Sequence[int]:
    """The arguments a sink reads, of the ``count`` a call has."""
    return range(count) if sink.args is None else [i for i in sink.args if i < count]


_STRINGS = frozenset({"string", "string_literal", "encapsed_string", "template_string", "text_block"})
_COMPOUNDS = frozenset(
    {"binary_expression", "binary_operator", "parenthesized_expression", "concatenated_string"}
)
"""Expressions over parts: constant when each part is."""
_INTERPOLATIONS = frozenset(
    {"interpolation", "variable_name", "template_substitution", "simple_variable", "dynamic_variable_name"}
)

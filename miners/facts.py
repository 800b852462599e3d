"""Facts between their three forms: ``schemas.Fact`` (what extractors emit and proofs show), the
engine's input tuples, and JSON lines (``ouro datalog run``, ``findings``).

Numbers are one type in the dialect (``1`` and ``1.0`` are the same constant) while ``schemas.Number``
holds a float: an integral number enters the engine as an ``int`` and is written to JSON as an integer,
so ``score(R, 1259)`` prints as ``1259``, not ``1259.0``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeGuard

import orjson
from pydantic import BaseModel, ValidationError

from ouroboros_gates.miners.datalog import GroundAtom, InputFact, ProofNode, Rule, Value
from ouroboros_gates.schemas import Arg, Fact, Number, Span, Text

__all__ = [
    "FactLineProblem",
    "ProofJson",
    "arg_json",
    "compact_json",
    "derived_line",
    "engine_value",
    "input_fact",
    "proof_facts",
    "proof_json",
    "read_fact_lines",
    "read_input_facts",
    "to_arg",
    "to_span",
]


def engine_value(arg: Arg) -> Value:
    """The engine's constant for an argument: the text, or the number (an int when integral)."""
    if isinstance(arg, Text):
        return arg.text
    number = arg.number
    return int(number) if _is_exact_integer(number) else number


def _is_exact_integer(number: float) -> bool:
    """Whether a float is integral and within the range where floats hold every integer exactly."""
    return number.is_integer() and abs(number) < 2**53


def to_arg(value: Value) -> Arg:
    """The ``schemas`` argument for an engine constant."""
    return Text(text=value) if isinstance(value, str) else Number(number=float(value))


def to_span(span: object) -> Span | None:
    """A proof leaf's span as ``schemas.Span``: extractor spans pass through, the engine's own
    ``(file, line)`` for facts written in the rules becomes a Span, anything else None."""
    if isinstance(span, Span):
        return span
    if _is_rules_span(span):
        return Span(file=span[0], line=span[1])
    return None


def _is_rules_span(span: object) -> TypeGuard[tuple[str, int]]:
    """Whether a span is the engine's ``(file, line)`` of a fact written in the rules."""
    return (
        isinstance(span, tuple) and len(span) == 2 and isinstance(span[0], str) and isinstance(span[1], int)
    )


def input_fact(fact: Fact) -> InputFact:
    """The engine's input tuple for an extracted fact (its span kept for proofs)."""
    return (fact.predicate, tuple(engine_value(arg) for arg in fact.args), fact.span)


def proof_facts(proof: ProofNode) -> tuple[Fact, ...]:
    """The leaves of a proof tree as facts with their spans, each once, in the order the proof uses them."""
    return tuple(
        Fact(predicate=leaf.atom.predicate, args=tuple(map(to_arg, leaf.atom.args)), span=to_span(leaf.span))
        for leaf in proof.leaves()
    )


def proof_json(proof: ProofNode) -> list[dict[str, Any]]:
    """A proof tree as a flat list, root first, each distinct atom once (deep proofs stay flat): a
    derived node has its rule, where the rule is written, its children (indices into the list) and
    the conditions it checked; a leaf has its span. A node ``Model.step`` left unexpanded has its rule
    and where it is written, and neither children nor conditions."""
    return ProofJson()(proof)


class ProofJson:
    """``proof_json`` for the many proofs of one model: each rule's text and place, and each leaf's span,
    formatted once (a rule is used by most proofs, a given fact by many)."""

    def __init__(self) -> None:
        self._rules: dict[int, tuple[Rule, str, str]] = {}  # by id: the rule is kept, so its id stays its own
        self._spans: dict[int, tuple[object, dict[str, Any] | None]] = {}

    def __call__(self, proof: ProofNode) -> list[dict[str, Any]]:
        nodes = list(proof.walk())
        index = {node.atom: number for number, node in enumerate(nodes)}
        return [self._node(node, index) for node in nodes]

    def _node(self, node: ProofNode, index: dict[GroundAtom, int]) -> dict[str, Any]:
        """One node: a leaf with its span, a node left unexpanded with its rule, or a derived one."""
        if node.rule is None:
            return {"atom": str(node.atom), "span": self.span(node.span)}
        rule, at = self._rule(node.rule)
        if not node.expanded:
            return {"atom": str(node.atom), "rule": rule, "at": at}
        return {
            "atom": str(node.atom),
            "rule": rule,
            "at": at,
            "children": [index[child.atom] for child in node.children],
            "conditions": [str(condition) for condition in node.conditions],
        }

    def _rule(self, rule: Rule) -> tuple[str, str]:
        known = self._rules.get(id(rule))
        if known is None:
            known = self._rules[id(rule)] = (rule, str(rule), str(rule.location))
        return known[1], known[2]

    def span(self, span: object) -> dict[str, Any] | None:
        """A leaf's span as JSON data (``{"file": …, "line": …}``), or None for a span that is no ``Span``."""
        known = self._spans.get(id(span))
        if known is None:
            found = to_span(span)
            dumped = None if found is None else found.model_dump(mode="json", exclude={"schema_version"})
            known = self._spans[id(span)] = (span, dumped)
        return known[1]


def arg_json(value: Value) -> dict[str, Any]:
    """An engine constant as its argument's JSON (``to_arg``, dumped): ``{"text": …}`` or ``{"number": …}``,
    an integral number an integer."""
    if isinstance(value, str):
        return {"text": value}
    return {"number": int(value) if _is_exact_integer(float(value)) else float(value)}


def derived_line(predicate: str, args: tuple[Value, ...], proof: list[dict[str, Any]] | None) -> bytes:
    """The line ``ouro datalog run`` prints for a derived atom and its proof (``ProofJson``; None: no
    ``proof`` key): the bytes
    ``compact_json`` writes for it, written by orjson where they are the same, which is wherever its only
    numbers are integers (orjson spells a float ``0.00001`` where ``json`` spells ``1e-05``) and orjson can
    write it (not an integer past 64 bits, nor a lone surrogate)."""
    written = [arg_json(value) for value in args]
    row: dict[str, Any] = {"predicate": predicate, "args": written}
    if proof is not None:
        row["proof"] = proof
    fast = None if _has_float(written) else _orjson_line(row)  # a proof holds no float
    if fast is not None:
        return fast
    return (compact_json(row) + "\n").encode("utf-8", "backslashreplace")  # a lone surrogate: its JSON escape


def _has_float(args: list[dict[str, Any]]) -> bool:
    """Whether an argument is a float (which orjson and ``json`` may spell differently)."""
    return any(isinstance(arg.get("number"), float) for arg in args)


def _orjson_line(row: dict[str, Any]) -> bytes | None:
    """The line as orjson writes it, or None where it cannot."""
    try:
        return orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        return None


def _plain(value: Any) -> Any:
    """JSON data without ``schema_version`` keys, integral floats written as integers."""
    if isinstance(value, dict):
        return _plain_object(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, float) and _is_exact_integer(value):
        return int(value)
    return value


def _plain_object(value: dict[str, Any]) -> dict[str, Any]:
    """A JSON object's fields but ``schema_version``, each plain."""
    return {key: _plain(item) for key, item in value.items() if key != "schema_version"}


def compact_json(record: BaseModel | dict[str, Any]) -> str:
    """One JSON line in the wire form (docs/loop.md, "Wire form"): fields in declaration order, no
    ``schema_version``, no spaces, integral numbers as integers
    (``{"miner":"draft-pr-late","rule":"invisible",…}``)."""
    data = record.model_dump(mode="json") if isinstance(record, BaseModel) else record
    return json.dumps(_plain(data), separators=(",", ":"), ensure_ascii=False)


class FactLineProblem(ValueError):
    """A facts line that is not a fact; ``str`` is ``file:line: reason``."""

    def __init__(self, span: Span, reason: str) -> None:
        super().__init__(f"{span.file}:{span.line}: {reason}")
        self.span = span
        self.reason = reason


_ARG_FORMS: dict[frozenset[str], type[Text] | type[Number]] = {
    frozenset({"text"}): Text,
    frozenset({"number"}): Number,
}
"""The written forms of an argument, by their one field."""


def _is_json_number(raw: Any) -> TypeGuard[int | float]:
    """Whether a JSON value is a number (``true`` and ``false`` are not)."""
    return isinstance(raw, int | float) and not isinstance(raw, bool)


def _number(raw: float) -> Number:
    """A plain number as an argument; ``ValueError`` if it is not finite."""
    if isinstance(raw, float) and not math.isfinite(raw):
        raise ValueError(f"argument {raw!r} is not a finite number")
    return Number(number=float(raw))


def _arg(raw: Any) -> Arg:
    """``{"text": …}``, ``{"number": …}``, or a plain JSON string or number."""
    if isinstance(raw, str):
        return Text(text=raw)
    if _is_json_number(raw):
        return _number(raw)
    if isinstance(raw, dict) and (form := _ARG_FORMS.get(frozenset(raw))) is not None:
        return form.model_validate(raw)
    raise ValueError(
        f"argument {json.dumps(raw)[:80]} is not a string, a number, {{'text': …}} or {{'number': …}}"
    )


def _fact(doc: Any, here: Span) -> Fact:
    _check_fields(doc)
    args = doc.get("args", [])
    if not isinstance(args, list):
        raise ValueError("args is a JSON array")
    span = doc.get("span")
    return Fact(
        predicate=doc.get("predicate"),
        args=tuple(_arg(arg) for arg in args),
        span=here if span is None else Span.model_validate(span),
    )


def _check_fields(doc: Any) -> None:
    """``ValueError`` unless a fact line is a JSON object with no field but a fact's."""
    if not isinstance(doc, dict):
        raise ValueError("a fact line is a JSON object")
    unknown = sorted(set(doc) - {"predicate", "args", "span"})
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)} (a fact has predicate, args, span)")


_PREDICATE = re.compile(r"[a-z][A-Za-z0-9_]*")


def _plain_fact(doc: Any, path: str, number: int) -> InputFact | None:
    """The engine's input for a line in the plain form (``{"predicate": p, "args": [strings and numbers]}``,
    no span), read without building ``schemas`` records; None for anything else, left to ``Fact``."""
    predicate = _plain_predicate(doc)
    if predicate is None:
        return None
    values: list[Value] = []
    for raw in doc["args"]:
        kind = type(raw)
        if kind is str or (kind is int and abs(raw) < 2**53):
            values.append(raw)
        elif kind is float and math.isfinite(raw):
            values.append(int(raw) if raw.is_integer() and abs(raw) < 2**53 else raw)
        else:
            return None
    return predicate, tuple(values), (path, number)


def _plain_predicate(doc: Any) -> str | None:
    """The predicate of a line in the plain form's shape (two fields, a predicate and an array), or
    None."""
    if type(doc) is not dict or len(doc) != 2 or "predicate" not in doc or type(doc.get("args")) is not list:
        return None
    predicate = doc["predicate"]
    if type(predicate) is not str or len(predicate) > 128 or _PREDICATE.fullmatch(predicate) is None:
        return None
    return predicate


def read_input_facts(path: Path) -> Iterator[InputFact | FactLineProblem]:
    """``read_fact_lines`` as the engine's input (``input_fact``), faster: a line in the plain form is read
    straight into a tuple, its span ``(file, line)`` (``to_span`` makes it a ``Span``); any other line goes
    through ``Fact`` as there, with the same errors."""
    name = str(path)
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                found = _plain_fact(orjson.loads(line), name, number)
            except orjson.JSONDecodeError:
                found = None
            if found is not None:
                yield found
                continue
            item = _fact_line(line.decode("utf-8", "replace"), Span(file=name, line=number))
            yield item if isinstance(item, FactLineProblem) else input_fact(item)


def _fact_line(line: str, here: Span) -> Fact | FactLineProblem:
    """One line as a ``Fact``, or the problem with it."""
    try:
        return _fact(json.loads(line), here)
    except json.JSONDecodeError as exc:
        return FactLineProblem(here, f"not valid JSON: {exc.msg} at column {exc.colno}")
    except ValidationError as exc:
        return _invalid(here, exc)
    except ValueError as exc:
        return FactLineProblem(here, f"not a fact: {exc}")


def _invalid(here: Span, exc: ValidationError) -> FactLineProblem:
    """The problem of a line that is not a fact: where in it, and the first error."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "fact"
    return FactLineProblem(here, f"not a fact: {where}: {first['msg']}")


def read_fact_lines(path: Path) -> Iterator[Fact | FactLineProblem]:
    """The facts of a JSON-lines file, one per line, lazily; a line that is not valid JSON or not a
    fact yields a ``FactLineProblem`` naming file:line and the reading goes on. A fact without a
    span gets its own file and line."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            yield _fact_line(line, Span(file=str(path), line=number))

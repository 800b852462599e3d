"""Facts between their three forms: ``schemas.Fact`` (what extractors emit and proofs show), the
engine's input tuples, and JSON lines (``ouro datalog run``, ``findings``).

Numbers are one type in the dialect (``1`` and ``1.0`` are the same constant) while ``schemas.Number``
holds a float: an integral number enters the engine as an ``int`` and is written to JSON as an integer,
so ``score(R, 1259)`` prints as ``1259``, not ``1259.0``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from miners.datalog import InputFact, ProofNode, Value
from schemas import Arg, Fact, Number, Span, Text

__all__ = [
    "FactLineProblem",
    "compact_json",
    "engine_value",
    "input_fact",
    "proof_facts",
    "proof_json",
    "read_fact_lines",
    "to_arg",
    "to_span",
]


def engine_value(arg: Arg) -> Value:
    """The engine's constant for an argument: the text, or the number (an int when integral)."""
    if isinstance(arg, Text):
        return arg.text
    number = arg.number
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def to_arg(value: Value) -> Arg:
    """The ``schemas`` argument for an engine constant."""
    return Text(text=value) if isinstance(value, str) else Number(number=float(value))


def to_span(span: object) -> Span | None:
    """A proof leaf's span as ``schemas.Span``: extractor spans pass through, the engine's own
    ``(file, line)`` for facts written in the rules becomes a Span, anything else None."""
    if isinstance(span, Span):
        return span
    if isinstance(span, tuple) and len(span) == 2 and isinstance(span[0], str) and isinstance(span[1], int):
        return Span(file=span[0], line=span[1])
    return None


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
    nodes = list(proof.walk())
    index = {node.atom: number for number, node in enumerate(nodes)}
    found: list[dict[str, Any]] = []
    for node in nodes:
        if node.rule is None:
            span = to_span(node.span)
            found.append(
                {
                    "atom": str(node.atom),
                    "span": None if span is None else span.model_dump(mode="json", exclude={"schema_version"}),
                }
            )
            continue
        if not node.expanded:
            found.append({"atom": str(node.atom), "rule": str(node.rule), "at": str(node.rule.location)})
            continue
        found.append(
            {
                "atom": str(node.atom),
                "rule": str(node.rule),
                "at": str(node.rule.location),
                "children": [index[child.atom] for child in node.children],
                "conditions": [str(condition) for condition in node.conditions],
            }
        )
    return found


def _plain(value: Any) -> Any:
    """JSON data without ``schema_version`` keys, integral floats written as integers."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items() if key != "schema_version"}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


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


def _arg(raw: Any) -> Arg:
    """``{"text": …}``, ``{"number": …}``, or a plain JSON string or number."""
    if isinstance(raw, str):
        return Text(text=raw)
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        if isinstance(raw, float) and not math.isfinite(raw):
            raise ValueError(f"argument {raw!r} is not a finite number")
        return Number(number=float(raw))
    if isinstance(raw, dict) and set(raw) == {"text"}:
        return Text.model_validate(raw)
    if isinstance(raw, dict) and set(raw) == {"number"}:
        return Number.model_validate(raw)
    raise ValueError(f"argument {json.dumps(raw)[:80]} is not a string, a number, {{'text': …}} or {{'number': …}}")


def _fact(doc: Any, here: Span) -> Fact:
    if not isinstance(doc, dict):
        raise ValueError("a fact line is a JSON object")
    unknown = sorted(set(doc) - {"predicate", "args", "span"})
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)} (a fact has predicate, args, span)")
    args = doc.get("args", [])
    if not isinstance(args, list):
        raise ValueError("args is a JSON array")
    span = doc.get("span")
    return Fact(
        predicate=doc.get("predicate"),
        args=tuple(_arg(arg) for arg in args),
        span=here if span is None else Span.model_validate(span),
    )


def read_fact_lines(path: Path) -> Iterator[Fact | FactLineProblem]:
    """The facts of a JSON-lines file, one per line, lazily; a line that is not valid JSON or not a
    fact yields a ``FactLineProblem`` naming file:line and the reading goes on. A fact without a
    span gets its own file and line."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            here = Span(file=str(path), line=number)
            try:
                yield _fact(json.loads(line), here)
            except json.JSONDecodeError as exc:
                yield FactLineProblem(here, f"not valid JSON: {exc.msg} at column {exc.colno}")
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(part) for part in first["loc"]) or "fact"
                yield FactLineProblem(here, f"not a fact: {where}: {first['msg']}")
            except ValueError as exc:
                yield FactLineProblem(here, f"not a fact: {exc}")

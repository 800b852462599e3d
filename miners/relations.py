"""A model's relations written out (``ouro datalog run``): JSON lines with each fact's proof (its last step,
or its whole tree) or without, or tab- or comma-separated values, one row a fact.

A JSON line (format 2, docs/datalog.md) is ``{"predicate", "args", "proof"}``; the proof of a derived fact
is its last step, ``{"rule", "at", "premises"}``: the rule's number and where it is written, and the body
facts it used, each ``{"predicate", "args"}`` (a fact is its own reference: ``ouro datalog explain`` expands
it); a given fact's proof is ``{"span"}``. The lines come from one template per rule, filled with each
value's JSON written once (``_Arguments``): no proof tree, atom text or dictionary is made per fact.

Each relation is written in one pass, in the order its facts were found (the same for the same rules, facts
and engine), straight from the model's own rows: nothing is copied, sorted or formatted before the first line
goes out, so memory stays what the model holds. ``sort`` the output for a canonical order.

TSV is Soufflé's output layout (its ``P.csv`` is tab-separated): a string as it is, except that a backslash,
tab, newline or carriage return is written ``\\\\``, ``\\t``, ``\\n``, ``\\r``; a number in its shortest form.
CSV is RFC 4180 (fields quoted where they must be).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Collection, Iterable
from enum import StrEnum
from typing import Any, BinaryIO, Literal

from ouroboros_gates.miners.datalog import Atom, Binding, Constant, Model, ProofsNotKeptError, Value
from ouroboros_gates.miners.datalog.relation import values_at
from ouroboros_gates.miners.facts import ProofJson, arg_json, derived_line

__all__ = ["OutputFormat", "Proofs", "write_relation"]

Proofs = Literal["none", "step", "tree"]
"""What a JSON line carries: no proof, the proof's last step (the rule and its premises), or the whole
tree."""

_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
_BATCH = 4096
"""Rows formatted per write: one ``write`` per row costs more than the formatting."""


class OutputFormat(StrEnum):
    """How ``ouro datalog run`` writes a relation."""

    JSONL = "jsonl"
    TSV = "tsv"
    CSV = "csv"

    @property
    def suffix(self) -> str:
        """The file name's ending in ``--out DIR``: ``P.jsonl``, ``P.tsv``, ``P.csv``."""
        return f".{self.value}"


def write_relation(
    model: Model, predicate: str, out: BinaryIO, form: OutputFormat, proofs: Proofs = "none"
) -> int:
    """Write the facts of ``predicate`` to ``out``; returns how many. ``proofs`` is for JSON lines only;
    ``ProofsNotKeptError`` if it asks for proofs the model was evaluated without."""
    rows = model.rows(predicate)
    if form is OutputFormat.TSV:
        _write_batches(out, (_tsv(row) for row in rows))
    elif form is OutputFormat.CSV:
        _write_csv(out, rows)
    else:
        _write_jsonl(model, predicate, rows, out, proofs)
    return len(rows)


def _write_jsonl(
    model: Model, predicate: str, rows: Collection[tuple[Value, ...]], out: BinaryIO, proofs: Proofs
) -> None:
    """The facts as JSON lines, with the proofs asked for."""
    if proofs == "none":
        arguments = _Arguments()
        line = _escaped(_head(predicate)) + _holes(len(next(iter(rows), ()))) + "]}\n"
        _write_batches(out, (line % tuple(map(arguments.__getitem__, row)) for row in rows))
    elif not _proofs_kept(model, predicate, proofs):
        raise ProofsNotKeptError(f"no proofs of {predicate}: the model was evaluated without proofs")
    elif proofs == "step":
        _write_batches(out, _step_lines(model, predicate))
    else:
        proof_json = ProofJson()
        for row in rows:
            out.write(derived_line(predicate, row, proof_json(model.proof(predicate, row))))


def _proofs_kept(model: Model, predicate: str, proofs: Proofs) -> bool:
    """Whether the model kept what ``proofs`` asks for: each fact's last step, and for a tree every fact's."""
    return model.keeps(predicate) and (proofs != "tree" or model.proofs)


class _Arguments(dict[Value, str]):
    """Each value's JSON argument (``{"text":…}`` or ``{"number":…}``, as ``compact_json`` writes it), made
    the first time it is asked for: a relation's rows share far fewer values than they hold."""

    def __missing__(self, value: Value) -> str:
        written = self[value] = _dumps(arg_json(value))
        return written


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _escaped(text: str) -> str:
    """Text for a ``%`` template, as itself."""
    return text.replace("%", "%%")


def _head(predicate: str) -> str:
    return f'{{"predicate":{_dumps(predicate)},"args":['


def _holes(count: int) -> str:
    return ",".join(["%s"] * count)


_Template = tuple[Binding, str, Callable[[tuple[Value, ...]], tuple[Value, ...]]]


def _template(model: Model, predicate: str, arity: int, index: int, arguments: _Arguments) -> _Template:
    """The line of a fact of ``predicate`` derived by evaluated rule ``index``: its binding, the line with a
    ``%s`` for each value the fact and its premises hold, and where each of those is in the binding's
    values (the fact's row first)."""
    binding = model.binding(index)
    slots = list(range(arity))
    # a negation or comparison is no premise: its values are the premises' (every variable is bound)
    premises = [
        _premise(literal, binding, arguments, slots)
        for literal in binding.rule.body
        if isinstance(literal, Atom)
    ]
    rule = binding.rule.rule
    at = _escaped(_dumps(str(rule.location)))
    step = f'{{"rule":{rule.index},"at":{at},"premises":[{",".join(premises)}]}}'
    line = f'{_escaped(_head(predicate))}{_holes(arity)}],"proof":{step}}}\n'
    return binding, line, values_at(slots)


def _premise(literal: Atom, binding: Binding, arguments: _Arguments, slots: list[int]) -> str:
    """A premise's JSON text with a ``%s`` for each variable, whose slot in the binding is added to
    ``slots``; a constant is written as itself."""
    args = []
    for term in literal.terms:
        if isinstance(term, Constant):
            args.append(_escaped(arguments[term.value]))
        else:
            args.append("%s")
            slots.append(binding.slots[term.name])
    return f"{_escaped(_head(literal.predicate))}{','.join(args)}]}}"


def _step_lines(model: Model, predicate: str) -> Iterable[str]:
    """Each fact of ``predicate`` with its proof's last step, as a JSON line (the module's docstring)."""
    arguments = _Arguments()
    templates: dict[object, _Template] = {}
    spans = ProofJson()
    for row, derivation in model.derivations(predicate):
        if isinstance(derivation, tuple):
            found = templates.get(derivation[0])
            if found is None:
                found = templates[derivation[0]] = _template(
                    model, predicate, len(row), int(derivation[0]), arguments
                )
            binding, line, pick = found
            yield line % tuple(map(arguments.__getitem__, pick(binding.values(row, derivation))))
        else:
            args = ",".join(map(arguments.__getitem__, row))
            yield f'{_head(predicate)}{args}],"proof":{{"span":{_dumps(spans.span(derivation.span))}}}}}\n'


def _text(value: Value) -> str:
    if isinstance(value, str):
        return value
    return str(value) if value.__class__ is int else repr(value)


def _tsv(row: tuple[Value, ...]) -> str:
    fields = [_text(value) for value in row]
    line = "\t".join(fields)
    # a field holding a tab, newline, carriage return or backslash is escaped (rare: checked on the line)
    if line.count("\t") != len(fields) - 1 or "\n" in line or "\r" in line or "\\" in line:
        line = "\t".join(field.translate(_ESCAPES) for field in fields)
    return line + "\n"


def _write_batches(out: BinaryIO, lines: Iterable[str]) -> None:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) == _BATCH:
            out.write("".join(batch).encode("utf-8", "backslashreplace"))
            batch.clear()
    out.write("".join(batch).encode("utf-8", "backslashreplace"))


def _write_csv(out: BinaryIO, rows: Iterable[tuple[Value, ...]]) -> None:
    text = io.TextIOWrapper(out, encoding="utf-8", errors="backslashreplace", newline="", write_through=False)
    try:
        csv.writer(text, lineterminator="\n").writerows([_text(value) for value in row] for row in rows)
        text.flush()
    finally:
        text.detach()  # the caller's stream stays open

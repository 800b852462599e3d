"""A model's relations written out (``ouro datalog run``): JSON lines with each fact's proof (its last step,
or its whole tree) or without, or tab- or comma-separated values, one row a fact.

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
from collections.abc import Iterable
from enum import StrEnum
from typing import BinaryIO, Literal

from ouroboros_gates.miners.datalog import Model, Value
from ouroboros_gates.miners.facts import ProofJson, derived_line

__all__ = ["OutputFormat", "Proofs", "write_relation"]

Proofs = Literal["none", "step", "tree"]
"""What a JSON line carries: no proof, the proof's last step (a derived premise's own line continues it),
or the whole tree."""

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
    """Write the facts of ``predicate`` to ``out``; returns how many. ``proofs`` is for JSON lines only."""
    rows = model.rows(predicate)
    if form is OutputFormat.TSV:
        _write_batches(out, (_tsv(row) for row in rows))
    elif form is OutputFormat.CSV:
        _write_csv(out, rows)
    elif proofs == "none":
        _write_batches(out, (derived_line(predicate, row, None).decode("utf-8") for row in rows))
    else:
        proof_json = ProofJson()
        build = model.proof if proofs == "tree" else model.step
        for row in rows:
            out.write(derived_line(predicate, row, proof_json(build(predicate, row))))
    return len(rows)


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

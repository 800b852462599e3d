"""The memory that ships with the package: labelled, name-invariant feature records, no code, no identity.

``ruleset/memory/shipped.json.gz`` holds one row per labelled candidate of every source
``ruleset/sources.toml``
marks ``ship = true`` (the SVEN train split, the OWASP Benchmark for Java, the seeded pairs, the synthetic
seed): its source, an opaque group (a digest of the source and the repository or case: the balance rule and
the boundary need a group, a report never a name), family, language, label, unit, and the feature record the
decider's own instruments built (values in the order of the file's ``features``, instrument states). No
excerpt, path, function or repository name is kept. ``ouro learn memory ship`` rebuilds it; the packaged
memory-vote program carries its digest, and a test holds the two together.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from ouroboros_gates.decider.features import FEATURES, SCHEMA_VERSION, feature_set_digest
from ouroboros_gates.decider.instruments.base import RULESET
from ouroboros_gates.decider.memory import Memory, MemoryExample
from ouroboros_gates.schemas import Example, InstrumentState, Scalar, State
from ouroboros_gates.schemas.errors import OuroError

__all__ = [
    "EMPTY_EXCERPT_SHA",
    "SHIPPED",
    "Row",
    "ShippedError",
    "example_of",
    "load_rows",
    "load_shipped",
    "opaque_group",
    "write_shipped",
]

SHIPPED = RULESET / "memory" / "shipped.json.gz"
EMPTY_EXCERPT_SHA = hashlib.sha256(b"").hexdigest()
"""A shipped example shows no code: its excerpt is empty."""
FORMAT = 1
_STATES = {s.value: s for s in State}


class ShippedError(OuroError):
    """A shipped memory file that does not load (another feature set, a broken row): the message says
    which."""


@dataclass(frozen=True)
class Row:
    """One labelled record as shipped."""

    source: str
    group: str
    family: str
    language: str
    y: Literal[0, 1]
    unit: str
    x: Mapping[str, Scalar]
    states: Mapping[str, str]


def opaque_group(source: str, group: str) -> str:
    """A group key that keeps units of one repository (or case) together and names none."""
    return "g:" + hashlib.sha256(f"{source}\0{group}".encode()).hexdigest()[:16]


def write_shipped(
    rows: Iterable[Row], versions: Mapping[str, Mapping[str, str | None]], path: Path = SHIPPED
) -> int:
    """Write the rows (sorted, so a rebuild from the same inputs is byte-identical); returns how many.
    ``versions``: per instrument and language, the version the records were built with."""
    names = [spec.name for spec in FEATURES]
    body = [
        [
            r.source,
            r.group,
            r.family,
            r.language,
            r.y,
            r.unit,
            [r.x.get(n) for n in names],
            dict(sorted(r.states.items())),
        ]
        for r in rows
    ]
    body.sort(key=lambda row: json.dumps(row, sort_keys=True))
    doc = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "feature_set_digest": feature_set_digest(),
        "features": names,
        "versions": versions,
        "rows": body,
    }
    text = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as out:
        out.write(text)
    return len(body)


def example_of(row: Row, versions: Mapping[str, Mapping[str, str | None]] | None = None) -> MemoryExample:
    """The memory example of one row (no excerpt: the memory vote reads the record only)."""
    table = versions or {}
    instruments = {
        name: InstrumentState(state=_STATES[state], version=table.get(name, {}).get(row.language))
        for name, state in row.states.items()
    }
    # trusted data (the packaged file, which a test holds valid; or records the instruments just built): not
    # validated again at every start
    example = Example.model_construct(
        excerpt_sha=EMPTY_EXCERPT_SHA,
        x=dict(row.x),
        instruments=instruments,
        y=row.y,
        group=row.group,
        language=row.language,
        family=row.family,
    )
    return MemoryExample(example=example, excerpt="", source=row.source, unit=row.unit)


def _row(raw: Sequence[Any], names: Sequence[str], where: str) -> Row:
    source, group, family, language, y, unit, values, states = raw
    if len(values) != len(names):
        raise ShippedError(f"{where}: {len(values)} values for {len(names)} features")
    return Row(source, group, family, language, y, unit, dict(zip(names, values, strict=True)), states)


def load_rows(path: Path = SHIPPED) -> tuple[dict[str, Any], list[MemoryExample]]:
    """The file's header and its examples; a file built for another feature set is refused, naming it."""
    doc = _document(path)
    names, versions = doc["features"], doc["versions"]
    examples = [
        example_of(_row(raw, names, f"{path}: row {i}"), versions) for i, raw in enumerate(doc["rows"])
    ]
    header = {k: v for k, v in doc.items() if k != "rows"}
    return header, examples


@cache
def load_shipped(path: Path = SHIPPED) -> Memory:
    """The shipped memory (empty when the package has none), read once per process."""
    if not path.exists():
        return Memory()
    return Memory(load_rows(path)[1])


def _document(path: Path) -> dict[str, Any]:
    """The file's JSON; refused, naming the file, when it is not a shipped memory or was built for another
    feature set."""
    try:
        with gzip.open(path, "rb") as fh:
            doc: dict[str, Any] = json.loads(fh.read())
    except (OSError, ValueError) as exc:
        raise ShippedError(f"{path}: not a shipped memory: {exc}") from exc
    if doc.get("feature_set_digest") != feature_set_digest() or doc.get("schema_version") != SCHEMA_VERSION:
        raise ShippedError(f"{path}: built for another feature set; rebuild it with `ouro learn memory ship`")
    return doc

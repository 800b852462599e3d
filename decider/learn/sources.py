"""The label-source allow-list (``ruleset/sources.toml``), fail-closed.

A directory may produce labels only when an entry names it, by ``path`` (relative to the allow-list's
repository root) or by ``match`` (the trailing path components of a corpus kept outside the repository).
The check reads only the allow-list: a directory that is not listed, or is listed as ``reserved``, is
refused before anything in it is opened.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ouroboros_gates.decider.instruments.base import RULESET
from ouroboros_gates.decider.learn.errors import LearnError, SourceNotAllowed

__all__ = ["SOURCE_KINDS", "STATUSES", "Source", "default_allow_list", "load_sources", "resolve_source"]

SOURCE_KINDS = ("adjudications", "benchmark", "pairs", "seed", "sven")
STATUSES = ("development", "spent", "recorded", "reserved")


@dataclass(frozen=True)
class Source:
    """One allow-listed source: where it is, what shape it has and the record of its evaluation."""

    id: str
    kind: str
    status: str
    record: str
    recorded: str
    licence: str
    path: str | None = None
    match: str | None = None
    ship: bool = False  # its labelled records go into the shipped memory (``ouro learn memory ship``)
    code: str | None = None  # a benchmark's folder of case files, inside the source
    expected: str | None = None  # a benchmark's expected-results CSV, inside the source
    shipped_as: str = ""  # what of it ships, and why its licence allows that


def default_allow_list() -> Path:
    """The shipped allow-list, ``ruleset/sources.toml``."""
    return RULESET / "sources.toml"


def load_sources(path: Path) -> list[Source]:
    """Parse the allow-list; every entry needs id, kind, status, record, recorded and path or match."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise LearnError(f"{path}: {exc}") from exc
    out: list[Source] = []
    for i, entry in enumerate(doc.get("source", [])):
        where = f"{path}: source[{i}]"
        data: dict[str, Any] = dict(entry)
        _check_entry(data, where)
        out.append(
            Source(
                id=data["id"],
                kind=data["kind"],
                status=data["status"],
                record=data["record"],
                recorded=data["recorded"],
                licence=data["licence"],
                path=data.get("path"),
                match=data.get("match"),
                ship=bool(data.get("ship", False)),
                code=data.get("code"),
                expected=data.get("expected"),
                shipped_as=str(data.get("shipped_as", "")),
            )
        )
    ids = [s.id for s in out]
    if len(set(ids)) != len(ids):
        raise LearnError(f"{path}: source ids repeat")
    return out


def _check_entry(data: Mapping[str, Any], where: str) -> None:
    """One allow-list entry's required strings, its kind and status, and what its kind and shipping need."""
    _check_strings(data, where)
    if data["kind"] not in SOURCE_KINDS:
        raise LearnError(f"{where}: kind: {data['kind']!r} is not one of {list(SOURCE_KINDS)}")
    if data["status"] not in STATUSES:
        raise LearnError(f"{where}: status: {data['status']!r} is not one of {list(STATUSES)}")
    if (data.get("path") is None) == (data.get("match") is None):
        raise LearnError(f"{where}: exactly one of path or match")
    _check_kind_needs(data, where)


def _check_strings(data: Mapping[str, Any], where: str) -> None:
    """The entry's required keys are non-empty strings."""
    for key in ("id", "kind", "status", "record", "recorded", "licence"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise LearnError(f"{where}: {key}: missing or not a string")


def _check_kind_needs(data: Mapping[str, Any], where: str) -> None:
    """A shipped source says what ships and why; a benchmark names its code and expected results."""
    if data.get("ship") and not isinstance(data.get("shipped_as"), str):
        raise LearnError(
            f"{where}: shipped_as: a shipped source says what of it ships and why its licence allows it"
        )
    _check_benchmark(data, where)


def _check_benchmark(data: Mapping[str, Any], where: str) -> None:
    """A benchmark entry names its code folder and its expected-results file."""
    if data["kind"] == "benchmark" and not (
        isinstance(data.get("code"), str) and isinstance(data.get("expected"), str)
    ):
        raise LearnError(
            f"{where}: a benchmark names its code folder and its expected results (code, expected)"
        )


def resolve_source(directory: Path, allow_list: Path) -> Source:
    """The entry that allows ``directory``, or ``SourceNotAllowed`` (nothing in it is opened)."""
    root = allow_list.resolve().parent
    target = Path(directory).absolute().resolve(strict=False)
    for source in load_sources(allow_list):
        if _names(source, root, target):
            if source.status == "reserved":
                raise SourceNotAllowed(f"{directory}: source {source.id!r} is reserved; it is never read")
            return source
    raise SourceNotAllowed(f"{directory}: not a source listed in {allow_list}; it is never read")


def _names(source: Source, root: Path, target: Path) -> bool:
    """Whether an entry names the directory: its ``path`` under the allow-list's folder, or its ``match`` as
    the directory's last parts."""
    if source.path is not None:
        return (root / source.path).resolve(strict=False) == target
    tail = Path(source.match or "").parts
    return bool(tail) and target.parts[-len(tail) :] == tail

"""The pair catalog: one folder per pair (or benign change) with ``catalog.toml`` and its code files.

    [pair]                                 or [benign]
    repository = "owner/name"              the repository the code comes from (its group before merges)
    advisories = ["CVE-2021-1234"]         advisory ids (CVE/GHSA) that merge groups across corpora
    language = "python"
    family = "injection"
    function = "find_orders"               the labelled function, the same name on both sides
    line = 5                               the labelled line on the vulnerable side (tip for benign)
    tier = "seeded"                        reviewed | advisory | seeded | title
    provenance = "human"                   human | agent | synthetic
    licence = "Apache-2.0"                 the code's licence (only permissive code may ship)
    unscorable = false                     identical twins and known limits give no labels
    frameworks = ["flask"]
    vulnerable = "vulnerable.py"           a file in the folder, or {commit = "<sha>", path = "…"} (a pin)
    fixed = "fixed.py"                     benign changes name ``base`` and ``tip`` instead

A pin names code in a clone the corpus does not ship; such a side has no code and gives no scorable unit
until the code is supplied.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeGuard

from ouroboros_gates.decider.learn.errors import CatalogError
from ouroboros_gates.decider.learn.groups import normalise_repo
from ouroboros_gates.schemas import LabelTier, Provenance

__all__ = ["KINDS", "PERMISSIVE", "Pair", "Side", "load_catalog", "load_pairs"]

KINDS = ("pair", "benign")
PERMISSIVE = frozenset({"MIT", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "ISC", "Zlib", "CC0-1.0"})
_SIDES = {"pair": ("vulnerable", "fixed"), "benign": ("base", "tip")}


@dataclass(frozen=True)
class Side:
    """One side of a pair: its code, or a pin into a clone that is not shipped."""

    code: str | None
    commit: str | None = None
    path: str | None = None


@dataclass(frozen=True)
class Pair:
    """A vulnerable/fixed pair (``kind = "pair"``) or a benign change (``kind = "benign"``)."""

    name: str
    kind: Literal["pair", "benign"]
    repository: str
    language: str
    family: str
    function: str
    line: int
    tier: LabelTier
    provenance: Provenance
    licence: str
    before: Side
    after: Side
    advisories: tuple[str, ...] = ()
    frameworks: tuple[str, ...] = ()
    unscorable: bool = False

    @property
    def repo(self) -> str:
        """The normalised repository key."""
        return normalise_repo(self.repository)

    @property
    def vulnerable(self) -> Side:
        """The vulnerable side of a pair (the tip of a benign change)."""
        return self.before if self.kind == "pair" else self.after

    @property
    def fixed(self) -> Side:
        """The fixed side of a pair (the base of a benign change)."""
        return self.after if self.kind == "pair" else self.before


def _need(data: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in data:
        raise CatalogError(f"{where}: {key}: missing")
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise CatalogError(f"{where}: {key}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _side(folder: Path, data: dict[str, Any], key: str, where: str) -> Side:
    value = data.get(key)
    if isinstance(value, str):
        file = folder / value
        if not file.is_file():
            raise CatalogError(f"{where}: {key}: no file {value!r} in {folder}")
        return Side(code=file.read_text(encoding="utf-8"))
    if _is_commit_ref(value):
        return Side(code=None, commit=value["commit"], path=value["path"])
    raise CatalogError(f"{where}: {key}: a file name or {{commit, path}}")


def _is_commit_ref(value: Any) -> TypeGuard[dict[str, Any]]:
    """Whether a side is a ``{commit, path}`` table (code read from a repository later)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("commit"), str)
        and isinstance(value.get("path"), str)
    )


def _enum(cls: type[LabelTier] | type[Provenance], data: dict[str, Any], key: str, where: str) -> Any:
    value = _need(data, key, str, where)
    try:
        return cls(value)
    except ValueError:
        raise CatalogError(f"{where}: {key}: {value!r} is not one of {[m.value for m in cls]}") from None


def _kind(doc: dict[str, Any], where: str) -> Literal["pair", "benign"]:
    """Which one table a catalog has: ``[pair]`` or ``[benign]``."""
    kinds = _tables(doc)
    if len(kinds) != 1 or not isinstance(doc[kinds[0]], dict):
        raise CatalogError(f"{where}: one table [pair] or [benign] is required")
    return "pair" if kinds[0] == "pair" else "benign"


def _tables(doc: dict[str, Any]) -> list[str]:
    """Which of ``[pair]`` and ``[benign]`` a catalog has."""
    return [k for k in KINDS if k in doc]


def load_catalog(folder: Path) -> Pair:
    """Read ``folder/catalog.toml`` and its code files; errors name the file and the field."""
    path = folder / "catalog.toml"
    where = str(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{where}: {exc}") from exc
    kind = _kind(doc, where)
    data: dict[str, Any] = doc[kind]
    before, after = (_side(folder, data, key, where) for key in _SIDES[kind])
    line = _line(data, where)
    return Pair(
        name=folder.name,
        kind=kind,
        repository=_need(data, "repository", str, where),
        language=_need(data, "language", str, where),
        family=_need(data, "family", str, where),
        function=_need(data, "function", str, where),
        line=line,
        tier=_enum(LabelTier, data, "tier", where),
        provenance=_enum(Provenance, data, "provenance", where),
        licence=_need(data, "licence", str, where),
        before=before,
        after=after,
        advisories=tuple(str(a).upper() for a in data.get("advisories", [])),
        frameworks=tuple(str(f) for f in data.get("frameworks", [])),
        unscorable=bool(data.get("unscorable", False)),
    )


def _line(data: dict[str, Any], where: str) -> int:
    """The function's line: an integer, at least 1."""
    line: int = _need(data, "line", int, where)
    if line < 1:
        raise CatalogError(f"{where}: line: must be ≥ 1")
    return line


def load_pairs(root: Path) -> list[Pair]:
    """Every pair folder under ``root`` (any depth), sorted by folder path."""
    return [load_catalog(p.parent) for p in sorted(root.rglob("catalog.toml"))]

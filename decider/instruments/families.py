"""Family ids, the CWE and operation maps onto them, and the closed mechanism vocabulary."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from typing import Any

from ouroboros_gates.decider.instruments.base import RULESET

__all__ = ["About", "Families", "families", "lexicon", "untagged_symbols"]


@dataclass(frozen=True)
class About:
    """What a report says of a family: its title, its primary CWE, its severity (0.1-10) and how to fix it."""

    title: str
    cwe: int | None
    severity: float
    help: str


@dataclass(frozen=True)
class Families:
    """``ruleset/families.toml``: ids, CWE → family, operation kind → family, mechanism tags, report text."""

    ids: tuple[str, ...]
    by_cwe: dict[int, str]
    by_operation: dict[str, str]
    mechanisms: tuple[str, ...]
    about: dict[str, About]

    def for_cwe(self, cwe: int | None) -> str | None:
        """The family of a CWE, or None when no family claims it."""
        return self.by_cwe.get(cwe) if cwe is not None else None

    def operations_of(self, family: str) -> frozenset[str]:
        """The role operation kinds that belong to a family."""
        return frozenset(op for op, fam in self.by_operation.items() if fam == family)


@cache
def families() -> Families:
    """Load the packaged family table once."""
    raw = tomllib.loads((RULESET / "families.toml").read_text(encoding="utf-8"))
    by_cwe: dict[int, str] = {}
    by_operation: dict[str, str] = {}
    ids: list[str] = []
    about: dict[str, About] = {}
    for entry in raw["family"]:
        ids.append(entry["id"])
        about[entry["id"]] = _about(entry)
        for cwe in entry.get("cwes", []):
            by_cwe[int(cwe)] = entry["id"]
        for operation in entry.get("operations", []):
            by_operation[operation] = entry["id"]
    return Families(
        ids=tuple(ids),
        by_cwe=by_cwe,
        by_operation=by_operation,
        mechanisms=tuple(raw["mechanisms"]),
        about=about,
    )


def _about(entry: dict[str, Any]) -> About:
    """A family's report text (its title is its id unless it has one; its CWE the first it lists)."""
    cwes = [int(c) for c in entry.get("cwes", [])]
    return About(
        title=str(entry.get("title", entry["id"])),
        cwe=cwes[0] if cwes else None,
        severity=float(entry.get("severity", 5.0)),
        help=str(entry.get("help", "")),
    )


@cache
def lexicon() -> dict[str, tuple[str, ...]]:
    """Framework and library ids with their symbols (``ruleset/frameworks.toml``), for the tag lint."""
    raw = tomllib.loads((RULESET / "frameworks.toml").read_text(encoding="utf-8"))
    return {
        entry["id"]: tuple(entry["lexicon"])
        for kind in ("framework", "library")
        for entry in raw.get(kind, [])
    }


def untagged_symbols(text: str, tagged: bool) -> list[str]:
    """Lexicon symbols named by an entry that carries no ``framework``/``library`` tag."""
    if tagged:
        return []
    return sorted(_symbols_in(text.replace("\\", "")))


def _symbols_in(text: str) -> set[str]:
    """The lexicon's symbols that occur in ``text``."""
    return {symbol for symbols in lexicon().values() for symbol in symbols if symbol in text}

"""Quick rules: one regular expression per source line, from ``ruleset/rules/*.toml``; a line that is a
comment and nothing else is not read (``# os.system(...)`` in a note is no call).

A rule names its family, closed mechanism tags and a precision estimate, and is ``enabled`` or
``shadow``. A rule tagged ``framework``/``library`` is a prior: it counts only in ``qr.prior_hits`` and
raises no signal unless priors are switched on.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from ouroboros_gates.decider.instruments.base import RULESET, digest_files, state
from ouroboros_gates.decider.instruments.families import Families, families
from ouroboros_gates.schemas import InstrumentState, State
from ouroboros_gates.schemas.errors import PermanentError

__all__ = [
    "Priors",
    "QuickHit",
    "QuickRule",
    "RulesetError",
    "load_rules",
    "prior_active",
    "quick_scan",
    "rules_version",
]

Priors = Literal["off", "all"] | frozenset[str]
"""Which framework/library priors are on: none (the default), all, or the named ids."""

_FIELDS = frozenset(
    {
        "id",
        "languages",
        "family",
        "pattern",
        "mechanisms",
        "precision_estimate",
        "status",
        "message",
        "framework",
        "library",
    }
)


class RulesetError(PermanentError):
    """A ruleset file that does not load: the message names the file and the entry."""


@dataclass(frozen=True)
class QuickRule:
    """One quick rule."""

    id: str
    languages: frozenset[str]
    family: str
    pattern: re.Pattern[str]
    mechanisms: tuple[str, ...]
    precision_estimate: float
    status: Literal["enabled", "shadow"]
    message: str
    tag: str | None

    @property
    def is_prior(self) -> bool:
        """True for a rule tagged with a framework or library."""
        return self.tag is not None


@dataclass(frozen=True)
class QuickHit:
    """A rule that matched a line."""

    rule: QuickRule
    line: int


def prior_active(tag: str | None, priors: Priors) -> bool:
    """Whether an entry with this tag is used under ``priors`` (a tag ``a|b`` is any of its ids)."""
    if tag is None:
        return True
    if priors == "all":
        return True
    return _chosen(tag, priors)


def _chosen(tag: str, priors: Priors) -> bool:
    """Whether one of a tag's ids (``a|b``) is among the priors switched on by name."""
    return isinstance(priors, frozenset) and any(part in priors for part in tag.split("|"))


def _rule_files() -> list[Path]:
    return sorted((RULESET / "rules").glob("*.toml"))


@cache
def rules_version() -> str:
    """The digest of every quick-rule file and the family table, and of how lines are read (``comments-1``:
    a comment line is skipped)."""
    return digest_files([*_rule_files(), RULESET / "families.toml"], "comments-1")


@cache
def load_rules() -> tuple[QuickRule, ...]:
    """Every quick rule, validated against the family table and the mechanism vocabulary."""
    table = families()
    rules: list[QuickRule] = []
    seen: set[str] = set()
    for path in _rule_files():
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        for entry in raw.get("rule", []):
            rule = _rule(entry, path.name)
            _check(rule, table, seen, path.name)
            seen.add(rule.id)
            rules.append(rule)
    return tuple(rules)


def _check(rule: QuickRule, table: Families, seen: set[str], where: str) -> None:
    """A ``RulesetError`` for a rule declared twice, or with a family or mechanism the table lacks."""
    if rule.id in seen:
        raise RulesetError(f"{where}: rule {rule.id!r} is declared twice")
    if rule.family not in table.ids:
        raise RulesetError(f"{where}: rule {rule.id!r}: unknown family {rule.family!r}")
    unknown = sorted(set(rule.mechanisms) - set(table.mechanisms))
    if unknown:
        raise RulesetError(f"{where}: rule {rule.id!r}: unknown mechanisms {unknown}")


def _rule(entry: dict[str, object], where: str) -> QuickRule:
    name = str(entry.get("id", "?"))
    _check_fields(entry, name, where)
    try:
        status, estimate = _status(entry)
        tag = _tag(entry)
        return QuickRule(
            id=name,
            languages=frozenset(str(lang) for lang in entry["languages"]),  # type: ignore[attr-defined]
            family=str(entry["family"]),
            pattern=re.compile(str(entry["pattern"])),
            mechanisms=tuple(str(m) for m in entry.get("mechanisms", [])),  # type: ignore[attr-defined]
            precision_estimate=estimate,
            status="enabled" if status == "enabled" else "shadow",
            message=str(entry["message"]),
            tag=str(tag) if tag is not None else None,
        )
    except (KeyError, TypeError, ValueError, re.error) as exc:
        raise RulesetError(f"{where}: rule {name!r}: {exc}") from exc


def _check_fields(entry: dict[str, object], name: str, where: str) -> None:
    """A ``RulesetError`` naming the fields a rule has that no rule has."""
    extra = sorted(set(entry) - _FIELDS)
    if extra:
        raise RulesetError(f"{where}: rule {name!r}: unknown fields {extra}")


def _status(entry: dict[str, object]) -> tuple[str, float]:
    """A rule's status and precision estimate (``ValueError`` when out of range)."""
    status = str(entry["status"])
    estimate = float(entry["precision_estimate"])  # type: ignore[arg-type]
    if status not in {"enabled", "shadow"} or not 0.0 <= estimate <= 1.0:
        raise ValueError("status must be enabled|shadow and precision_estimate in [0, 1]")
    return status, estimate


def _tag(entry: dict[str, object]) -> object:
    """The framework or library a rule belongs to, if any (``ValueError`` when it names both)."""
    if "framework" in entry and "library" in entry:
        raise ValueError("a rule is tagged with a framework or a library, not both")
    return entry.get("framework", entry.get("library"))


def quick_scan(language: str, lines: tuple[str, ...]) -> tuple[list[QuickHit], InstrumentState]:
    """Every hit of every rule for ``language`` (``none`` when no rule covers the language)."""
    rules = [rule for rule in load_rules() if language in rule.languages]
    if not rules:
        return [], state(State.NONE, rules_version())
    hits = [
        QuickHit(rule=rule, line=number)
        for number, text in _code_lines(language, lines)
        for rule in rules
        if rule.pattern.search(text)
    ]
    return hits, state(State.RAN, rules_version())


def _code_lines(language: str, lines: tuple[str, ...]) -> list[tuple[int, str]]:
    """The numbered lines of a file (from 1) but those that are a comment and nothing else."""
    comment = _COMMENT_LINE.get(language)
    return [
        (number, text)
        for number, text in enumerate(lines, start=1)
        if comment is None or not comment.match(text)
    ]


_C_LIKE = re.compile(r"\s*(//|/\*)")
_BLOCK_BODY = re.compile(
    r"\s*(//|/\*|\*(\s|/|$))"
)  # a block comment's ``* text`` line, where no code starts with *
_COMMENT_LINE: dict[str, re.Pattern[str]] = {
    "python": re.compile(r"\s*#"),
    "c": _C_LIKE,  # ``*p = x;`` is code in C and C++
    "cpp": _C_LIKE,
    "java": _BLOCK_BODY,
    "javascript": _BLOCK_BODY,
    "typescript": _BLOCK_BODY,
    "php": re.compile(r"\s*(#(?!\[)|//|/\*|\*(\s|/|$))"),  # ``#[Attribute]`` is code
}

"""Labels from allow-listed sources: pin units per pair side, delta units per direction, adjudications.

Rules (docs/decider.md, "Labels"):

- a pair's labelled function on the vulnerable side is positive, the same function on the fixed side negative;
- ``unscorable`` pairs give no labels; tier ``title`` is excluded unless asked for (a sensitivity arm);
- each pair also gives two delta units: fixed→vulnerable (introducing, positive) and vulnerable→fixed
  (repair, negative for BLOCK); a benign change base→tip is a benign delta (negative);
- an adjudication ``True`` / ``True, privileged`` is positive and ``False, …`` negative, keeping who
  adjudicated and what they wrote;
- groups are the normalised repositories merged across advisory ids.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ouroboros_gates.decider.learn.errors import LearnError
from ouroboros_gates.decider.learn.groups import merge_groups, normalise_repo
from ouroboros_gates.decider.learn.pairs import Pair, load_pairs
from ouroboros_gates.decider.learn.sources import Source, resolve_source
from ouroboros_gates.schemas import Candidate, Label, LabelTier, Provenance, Unit

__all__ = [
    "Direction",
    "LabelSet",
    "LabelledUnit",
    "adjudication_label",
    "build_labels",
    "load_source",
    "units_from_pairs",
]

Direction = Literal["vulnerable", "fixed", "introducing", "repair", "benign", "adjudicated"]


@dataclass(frozen=True)
class LabelledUnit:
    """One labelled unit: a function at one side (pin) or a change base→head (delta), with its code."""

    uid: str
    source: str
    source_ref: str
    repo: str
    group: str
    language: str
    family: str
    function: str
    line: int
    unit: Literal["pin", "delta"]
    direction: Direction
    y: Literal[0, 1]
    code: str
    base_code: str | None
    tier: str
    provenance: str
    licence: str
    frameworks: tuple[str, ...] = ()
    advisories: tuple[str, ...] = ()
    weight: float = 1.0
    evidence: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def is_delta(self) -> bool:
        """Whether this is a delta unit (the primary unit of BLOCK)."""
        return self.unit == "delta"

    @property
    def pin(self) -> str:
        """The content address of the head code (git blob sha1), standing in for a commit."""
        body = self.code.encode()
        return hashlib.sha1(b"blob %d\0" % len(body) + body, usedforsecurity=False).hexdigest()

    def to_label(self) -> Label:
        """The schema's ``Label`` for this unit."""
        candidate = Candidate(
            repo=self.repo, pin=self.pin, path=self.source_ref, function=self.function, family=self.family
        )
        return Label(
            candidate=candidate,
            y=self.y,
            source=self.source,
            source_ref=self.source_ref,
            group=self.group,
            tier=LabelTier(self.tier),
            provenance=Provenance(self.provenance),
            unit=Unit.DELTA if self.is_delta else Unit.PIN,
            weight=self.weight,
        )

    def row(self) -> dict[str, Any]:
        """A JSON-ready row (the label snapshot line)."""
        data = asdict(self)
        data["frameworks"], data["advisories"] = list(self.frameworks), list(self.advisories)
        return data


def _uid(source: str, ref: str, direction: str) -> str:
    return hashlib.sha256(f"{source}\0{ref}\0{direction}".encode()).hexdigest()[:16]


def units_from_pairs(
    pairs: Iterable[Pair], source: str, *, include_title: bool = False
) -> tuple[list[LabelledUnit], Counter[str]]:
    """Apply the pair rules; the counter says what was excluded and why."""
    units: list[LabelledUnit] = []
    excluded: Counter[str] = Counter()
    for pair in pairs:
        reason = _excluded_because(pair, include_title)
        if reason is not None:
            excluded[reason] += 1
            continue
        vulnerable, fixed = pair.vulnerable.code, pair.fixed.code
        assert vulnerable is not None and fixed is not None  # a pair without code is excluded above
        common = _common(pair, source)
        for direction, unit, y, code, base in _sides(pair, vulnerable, fixed):
            uid = _uid(source, pair.name, direction)
            units.append(
                LabelledUnit(
                    uid=uid, unit=unit, direction=direction, y=y, code=code, base_code=base, **common
                )
            )
    return units, excluded


def _excluded_because(pair: Pair, include_title: bool) -> str | None:
    """Why a pair yields no unit: unscorable, of the title tier (unless included), or without code."""
    if pair.unscorable:
        return "unscorable"
    if pair.tier is LabelTier.TITLE and not include_title:
        return "title_tier"
    if pair.vulnerable.code is None or pair.fixed.code is None:
        return "no_code"
    return None


def _common(pair: Pair, source: str) -> dict[str, Any]:
    """What every unit of a pair shares."""
    return {
        "source": source,
        "source_ref": pair.name,
        "repo": pair.repo,
        "group": pair.repo,
        "language": pair.language,
        "family": pair.family,
        "function": pair.function,
        "line": pair.line,
        "tier": pair.tier.value,
        "provenance": pair.provenance.value,
        "licence": pair.licence,
        "frameworks": pair.frameworks,
        "advisories": pair.advisories,
    }


_Side = tuple[Direction, Literal["pin", "delta"], Literal[0, 1], str, str | None]
"""A unit of a pair: direction, unit kind, label, code and the code it changed from."""


def _sides(pair: Pair, vulnerable: str, fixed: str) -> list[_Side]:
    """A benign change is one negative delta unit; a vulnerability pair is its two functions (pin units) and
    the introducing change and the repair (delta units)."""
    if pair.kind == "benign":
        return [("benign", "delta", 0, vulnerable, fixed)]
    return [
        ("vulnerable", "pin", 1, vulnerable, None),
        ("fixed", "pin", 0, fixed, None),
        ("introducing", "delta", 1, vulnerable, fixed),
        ("repair", "delta", 0, fixed, vulnerable),
    ]


def adjudication_label(verdict: str) -> Literal[0, 1]:
    """``True`` / ``True, privileged`` → 1; ``False`` / ``False, …`` → 0; anything else is refused."""
    head = verdict.split(",", 1)[0].strip()
    if head == "True":
        return 1
    if head == "False":
        return 0
    raise LearnError(f"adjudication verdict {verdict!r}: expected 'True[, …]' or 'False[, …]'")


def _adjudications(path: Path, source: Source) -> list[LabelledUnit]:
    units = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            y = adjudication_label(str(row["verdict"]))
            repo = normalise_repo(str(row["repository"]))
            ref = f"{path.name}:{n}"
            units.append(
                LabelledUnit(
                    uid=_uid(source.id, ref, "adjudicated"),
                    source=source.id,
                    source_ref=ref,
                    repo=repo,
                    group=repo,
                    language=str(row["language"]),
                    family=str(row["family"]),
                    function=str(row["function"]),
                    line=int(row.get("line", 1)),
                    unit="pin",
                    direction="adjudicated",
                    y=y,
                    code=str(row["code"]),
                    base_code=None,
                    tier="reviewed",
                    provenance="human",
                    licence=str(row.get("licence", "unknown")),
                    evidence={
                        "adjudicator": str(row["adjudicator"]),
                        "text": str(row.get("text", "")),
                        "verdict": str(row["verdict"]),
                    },
                )
            )
        except (KeyError, ValueError, TypeError, json.JSONDecodeError) as exc:
            raise LearnError(f"{path}:{n}: {exc}") from exc
    return units


def load_source(
    directory: Path, allow_list: Path, *, include_title: bool = False
) -> tuple[Source, list[LabelledUnit], Counter[str]]:
    """Labels of one allow-listed directory (refused, unopened, when it is not listed)."""
    source = resolve_source(directory, allow_list)
    if source.kind == "pairs":
        units, excluded = units_from_pairs(load_pairs(directory), source.id, include_title=include_title)
        return source, units, excluded
    if source.kind == "sven":
        from ouroboros_gates.decider.learn.sven import load_sven

        units, excluded = units_from_pairs(load_sven(directory), source.id, include_title=include_title)
        return source, units, excluded
    units = [u for f in sorted(directory.glob("*.jsonl")) for u in _adjudications(f, source)]
    return source, units, Counter()


@dataclass(frozen=True)
class LabelSet:
    """The labelled units of every source read, with merged groups and what was excluded."""

    units: tuple[LabelledUnit, ...]
    sources: tuple[str, ...]
    excluded: dict[str, int]

    @property
    def digest(self) -> str:
        """sha256 over the canonical rows (code included by its hash)."""
        h = hashlib.sha256()
        for unit in sorted(self.units, key=lambda u: u.uid):
            row = unit.row()
            row["code"] = hashlib.sha256(unit.code.encode()).hexdigest()
            row["base_code"] = hashlib.sha256((unit.base_code or "").encode()).hexdigest()
            h.update(json.dumps(row, sort_keys=True).encode())
        return h.hexdigest()

    def groups(self) -> list[str]:
        """Distinct groups, sorted."""
        return sorted({u.group for u in self.units})

    def summary(self) -> dict[str, Any]:
        """Counts by source, family, language and unit; groups per family and label."""
        by_family = _groups_by_family(self.units)
        return {
            "units": len(self.units),
            "groups": len(self.groups()),
            "sources": list(self.sources),
            "by_source": dict(sorted(Counter(u.source for u in self.units).items())),
            "by_language": dict(sorted(Counter(u.language for u in self.units).items())),
            "by_direction": dict(sorted(Counter(u.direction for u in self.units).items())),
            "groups_by_family": _group_counts(by_family),
            "excluded": dict(sorted(self.excluded.items())),
            "digest": self.digest,
        }


def _groups_by_family(units: Iterable[LabelledUnit]) -> dict[str, dict[str, set[str]]]:
    """The positive and the negative units' groups of each family."""
    by_family: dict[str, dict[str, set[str]]] = {}
    for u in units:
        by_family.setdefault(u.family, {"positive": set(), "negative": set()})[
            "positive" if u.y else "negative"
        ].add(u.group)
    return by_family


def _group_counts(by_family: dict[str, dict[str, set[str]]]) -> dict[str, dict[str, int]]:
    """How many positive and negative groups each family has, families sorted."""
    return {f: {k: len(v) for k, v in d.items()} for f, d in sorted(by_family.items())}


def build_labels(directories: Sequence[Path], allow_list: Path, *, include_title: bool = False) -> LabelSet:
    """Read every directory through the allow-list and merge groups across advisory ids."""
    units: list[LabelledUnit] = []
    excluded: Counter[str] = Counter()
    sources = []
    for directory in directories:
        source, got, skipped = load_source(directory, allow_list, include_title=include_title)
        if source.id in sources:
            raise LearnError(f"{directory}: source {source.id!r} is read twice")
        sources.append(source.id)
        units += got
        excluded.update(skipped)
    group_of = merge_groups(_advisories_by_repo(units))
    merged = tuple(replace(u, group=group_of[u.repo]) for u in units)
    return LabelSet(units=merged, sources=tuple(sources), excluded=dict(excluded))


def _advisories_by_repo(units: Iterable[LabelledUnit]) -> dict[str, set[str]]:
    """Every advisory id each repository's units carry."""
    advisories: dict[str, set[str]] = {}
    for u in units:
        advisories.setdefault(u.repo, set()).update(u.advisories)
    return advisories

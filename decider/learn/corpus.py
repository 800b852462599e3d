"""Every labelled source, as the decider's instruments see it: what the shipped memory is built from and what
the held-out evaluation scores (``loso``).

A source of ``ruleset/sources.toml`` is read by its kind: ``pairs`` and ``sven`` through the label pipeline
(each pair's two sides as pin units, its two changes as delta units, analysed in a small git history),
``benchmark`` case by case (each case file scanned as ``ouro scan`` reads a folder, labelled by the expected
results, its own group), ``seed`` through the synthetic seed repositories. Each labelled unit or case becomes
a ``Labelled``: its label and group, the feature records of its candidates of its family (none: a reach miss),
and what the quick rules and Bandit alone said of it. The result is cached under ``<state>/learn/corpus/`` per
source, priors setting and instrument versions, so an evaluation reads the same analysis the memory was built
from.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ouroboros_gates.decider.analyse import Analysed
from ouroboros_gates.decider.features import feature_set_digest
from ouroboros_gates.decider.frameworks import Priors
from ouroboros_gates.decider.instruments.base import RULESET, digest_files
from ouroboros_gates.decider.learn.errors import LearnError
from ouroboros_gates.decider.learn.sources import Source
from ouroboros_gates.schemas import FeatureRecord

if TYPE_CHECKING:  # read lazily where they are used, for start-up speed
    from ouroboros_gates.decider.learn.benchmark_cases import Case
    from ouroboros_gates.decider.learn.labels import LabelledUnit
    from ouroboros_gates.decider.memory import MemoryExample

__all__ = ["Labelled", "Located", "analyse_source", "instruments_digest", "locate"]

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Labelled:
    """One labelled unit or case of a source: its label, group and pair, the records of its family's
    candidates, and what the quick rules and Bandit alone said of it (of its family, and of any family in its
    file)."""

    source: str
    ref: str
    pair: str
    group: str
    family: str
    language: str
    unit: str
    direction: str
    y: int
    records: tuple[tuple[dict[str, Any], dict[str, str]], ...]
    qr: bool
    bandit: bool
    qr_any: bool
    bandit_any: bool

    @property
    def reached(self) -> bool:
        """Whether an instrument surfaced a candidate of its family (else a reach miss)."""
        return bool(self.records)


@dataclass(frozen=True)
class Located:
    """An allow-listed source and the folder it is read from."""

    source: Source
    folder: Path


def locate(source: Source, corpora: Path | None) -> Located:
    """Where a source lies: ``path`` under the ruleset, ``match`` under the corpora folder (an error naming
    both when it is not there)."""
    if source.path is not None:
        return Located(source, RULESET / source.path)
    if corpora is None:
        raise LearnError(
            f"source {source.id}: lies outside the repository ({source.match}); give --corpora DIR"
        )
    folder = corpora / (source.match or "")
    if not folder.is_dir():
        raise LearnError(f"source {source.id}: {folder}: no such directory (--corpora {corpora})")
    return Located(source, folder)


@cache
def instruments_digest() -> str:
    """The feature set and every ruleset file the instruments read (rules, taint and semantic vocabularies,
    families, frameworks): a change makes a cached analysis stale."""
    folders = ("rules", "taint", "semantic")
    files = [p for folder in folders for p in sorted((RULESET / folder).glob("*.toml"))]
    files += [RULESET / "families.toml", RULESET / "frameworks.toml"]
    from ouroboros_gates.decider.instruments.bandit_tool import bandit_version

    return digest_files(files, feature_set_digest(), bandit_version(), "corpus-1")


def _states(record: FeatureRecord) -> dict[str, str]:
    return {name: state.state.value for name, state in sorted(record.instruments.items())}


def _said(items: Iterable[Analysed]) -> tuple[bool, bool]:
    signals = [s for item in items for s in item.signals]
    return any(s.instrument == "qr" for s in signals), any(s.instrument == "bandit" for s in signals)


def _units(located: Located, priors: Priors, workdir: Path, progress: Progress | None) -> list[Labelled]:
    from ouroboros_gates.decider.learn.labels import build_labels
    from ouroboros_gates.decider.learn.materialise import analyse_units
    from ouroboros_gates.decider.learn.sources import default_allow_list

    labels = build_labels([located.folder], default_allow_list())
    analysed = analyse_units(labels.units, workdir, progress, priors=priors)
    return [_labelled_unit(u, analysed.get(u.uid)) for u in labels.units]


def _labelled_unit(u: LabelledUnit, item: Analysed | None) -> Labelled:
    """A pair's unit with its record (none: a reach miss) and what its instruments said."""
    qr, bandit = _said([item] if item is not None else [])
    records = ((dict(item.record.x), _states(item.record)),) if item is not None else ()
    return Labelled(
        u.source,
        u.uid,
        u.source_ref,
        u.group,
        u.family,
        u.language,
        u.unit,
        u.direction,
        u.y,
        records,
        qr,
        bandit,
        qr,
        bandit,
    )


def _cases(located: Located, priors: Priors, jobs: int, progress: Progress | None) -> list[Labelled]:
    from ouroboros_gates.decider.learn.benchmark import analyse_cases, load_cases

    source = located.source
    code = located.folder / (source.code or "")
    cases = load_cases(code, located.folder / (source.expected or ""))
    analysed, _skipped = analyse_cases(cases, code, jobs=jobs, progress=progress, priors=priors)
    return [_labelled_case(source.id, case, analysed.get(case.name, [])) for case in cases]


def _labelled_case(source_id: str, case: Case, every: Sequence[Analysed]) -> Labelled:
    """A benchmark case with the records of its family's candidates, and what the instruments said of its
    family and of any family in its file."""
    mine = [a for a in every if a.candidate.family == case.family]
    qr, bandit = _said(mine)
    qr_any, bandit_any = _said(every)
    records = tuple((dict(a.record.x), _states(a.record)) for a in mine)
    return Labelled(
        source_id,
        case.name,
        case.name,
        case.group,
        case.family,
        mine[0].language if mine else _language(case.path),
        "pin",
        "case",
        case.y,
        records,
        qr,
        bandit,
        qr_any,
        bandit_any,
    )


def _language(path: str) -> str:
    from ouroboros_gates.decider.languages import language_of

    return language_of(path) or "unknown"


def _seed(located: Located) -> list[Labelled]:
    from ouroboros_gates.decider.seed import build_seed_memory

    memory, missed = build_seed_memory(located.folder)
    if missed:
        raise LearnError(f"source {located.source.id}: labels match no candidate: {', '.join(missed)}")
    return [_labelled_seed(located.source.id, e) for e in memory.examples]


def _labelled_seed(source_id: str, e: MemoryExample) -> Labelled:
    """A seed memory example as a labelled unit (the seed's examples carry no instrument findings)."""
    states = {k: v.state.value for k, v in sorted(e.example.instruments.items())}
    return Labelled(
        source_id,
        e.id,
        e.id,
        e.group,
        e.family,
        e.example.language,
        e.unit,
        "seed",
        e.y,
        ((dict(e.example.x), states),),
        False,
        False,
        False,
        False,
    )


def _cache_path(cache_dir: Path, located: Located, priors: Priors) -> Path:
    """Keyed by the folder, the instruments and, for a source inside the repository (small, and edited with
    the code: the seed, the seeded pairs), the content of its files."""
    content = _content_digest(located.folder) if located.source.path is not None else ""
    key = hashlib.sha256(
        f"{located.folder.resolve()}\0{instruments_digest()}\0{content}".encode()
    ).hexdigest()
    return cache_dir / f"{located.source.id}-{priors}-{key[:16]}.jsonl.gz"


def _content_digest(folder: Path) -> str:
    """The digest of a folder's files (not the memory: its ``.gz``)."""
    files = [p for p in sorted(folder.rglob("*")) if p.is_file() and p.suffix != ".gz"]
    return digest_files(files)


def analyse_source(
    located: Located, priors: Priors, cache_dir: Path, *, jobs: int = 1, progress: Progress | None = None
) -> list[Labelled]:
    """Every labelled unit or case of one source under ``priors`` (from the cache when the instruments have
    not changed since it was written)."""
    path = _cache_path(cache_dir, located, priors)
    if path.exists():
        return _read_cache(path)
    found = _analyse(located, priors, cache_dir, jobs, progress)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(asdict(item), sort_keys=True) + "\n" for item in found)
    return found


def _read_cache(path: Path) -> list[Labelled]:
    """The labelled units a cache file holds, one JSON line each."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [_from_json(json.loads(line)) for line in fh if line.strip()]


def _analyse(
    located: Located, priors: Priors, cache_dir: Path, jobs: int, progress: Progress | None
) -> list[Labelled]:
    """A source's labelled units, read as its kind is: pairs, a benchmark, or the seed."""
    kind = located.source.kind
    if kind in ("pairs", "sven"):
        return _units(located, priors, cache_dir / "work", progress)
    if kind == "benchmark":
        return _cases(located, priors, jobs, progress)
    if kind == "seed":
        return _seed(located)
    raise LearnError(f"source {located.source.id}: kind {kind!r} has no labelled units to analyse here")


def _from_json(data: dict[str, Any]) -> Labelled:
    data["records"] = tuple((x, states) for x, states in data["records"])
    return Labelled(**data)


def records_of(items: Sequence[Labelled]) -> list[tuple[Labelled, dict[str, Any], dict[str, str]]]:
    """Every record with the unit it labels."""
    return [(item, x, states) for item in items for x, states in item.records]

"""Building the memory that ships, fitting the packaged memory-vote program on it, and evaluating both on
every source held out in turn (``ouro learn memory ship``, ``ouro learn evaluate --loso``).

``ship`` analyses every source ``ruleset/sources.toml`` marks ``ship = true`` with priors ``detected`` (the
default a user gets), writes their records to ``ruleset/memory/shipped.json.gz`` and the memory-vote program,
with the memory's digest and ADVISORY points fitted source by source (each source scored with the others), to
``ruleset/programs/memory-vote-static.json``. ``held_out`` does, for one source, what ``ship`` does without
it, and scores it; ``evaluate`` runs that for every labelled source under priors ``detected`` and ``off``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ouroboros_gates.decider.frameworks import Priors
from ouroboros_gates.decider.learn.corpus import Labelled, analyse_source, locate
from ouroboros_gates.decider.learn.loso import Unit, fit_points, memory_of, rows_of, score_units, summarise
from ouroboros_gates.decider.learn.sources import Source, default_allow_list, load_sources
from ouroboros_gates.decider.program import OperatingPoint, Program
from ouroboros_gates.decider.shipped import SHIPPED, load_rows, write_shipped

__all__ = ["EVALUATED", "PROGRAM", "analyse_all", "evaluate", "fit_program_points", "held_out", "ship"]

PROGRAM = SHIPPED.parent.parent / "programs" / "memory-vote-static.json"
EVALUATED = ("owasp-benchmark-java", "sven", "seeded-pairs")
"""The sources reported held out (the synthetic seed is too small to say anything alone)."""
PYTHON_FAMILIES = ("command_injection", "path_traversal", "sql_injection", "xss")
"""SVEN's Python families (its C and C++ are memory safety)."""
Say = Callable[[str], None]


def shipped_sources() -> list[Source]:
    """The sources whose records ship."""
    return [s for s in load_sources(default_allow_list()) if s.ship]


def analyse_all(
    corpora: Path | None, cache: Path, priors: Priors, *, jobs: int = 1, say: Say | None = None
) -> dict[str, list[Labelled]]:
    """Every shipped source's labelled units under ``priors`` (cached)."""
    found: dict[str, list[Labelled]] = {}
    for source in shipped_sources():
        located = locate(source, corpora)
        if say is not None:
            say(f"analysing {source.id} ({located.folder}), priors {priors}")
        found[source.id] = analyse_source(
            located, priors, cache, jobs=jobs, progress=_every(say, source.id) if say else None
        )
    return found


def _every(say: Say, what: str) -> Callable[[int, int], None]:
    def show(done: int, total: int) -> None:
        if done == total or done % 200 == 0:
            say(f"  {what}: {done}/{total}")

    return show


def _pins(items: Sequence[Labelled]) -> list[Labelled]:
    return [i for i in items if i.unit == "pin"]


def fit_program_points(sources: Mapping[str, Sequence[Labelled]]) -> dict[str, OperatingPoint]:
    """ADVISORY points fitted on these sources alone: each source's pin units scored with the others'
    records."""
    scored: list[Unit] = []
    for name, items in sources.items():
        scored += score_units(_pins(items), memory_of(_items(_without(sources, name))))
    return fit_points(scored)


def _without(sources: Mapping[str, Sequence[Labelled]], name: str) -> dict[str, Sequence[Labelled]]:
    """Every source but ``name``."""
    return {other: items for other, items in sources.items() if other != name}


def _items(sources: Mapping[str, Sequence[Labelled]]) -> list[Labelled]:
    """The units of every source, a source at a time."""
    return [i for items in sources.values() for i in items]


def _program(points: Mapping[str, OperatingPoint], memory_digest: str, priors: str) -> Program:
    return Program(
        kind="memory-vote",
        priors=priors,
        memory=memory_digest,
        operating_points=dict(points),
        source="packaged: the shipped memory (ruleset/memory/shipped.json.gz) votes; ADVISORY per family at "
        "recall "
        ">= 0.90 of its pin units, each source scored with the other sources' records only; a live flow from "
        "external input is ADVISORY at least, a guarded sink below it; BLOCK not offered: insufficient data",
    )


def ship(
    corpora: Path | None,
    cache: Path,
    *,
    jobs: int = 1,
    say: Say | None = None,
    memory_path: Path = SHIPPED,
    program_path: Path = PROGRAM,
) -> tuple[int, Program]:
    """Rebuild the shipped memory and the packaged memory-vote program; returns the rows written and the
    program."""
    from ouroboros_gates.decider.learn.versions import instrument_versions

    sources = analyse_all(corpora, cache, "detected", jobs=jobs, say=say)
    rows = rows_of(_items(sources))
    written = write_shipped(rows, instrument_versions(), memory_path)
    _header, examples = load_rows(memory_path)
    from ouroboros_gates.decider.memory import Memory

    digest = Memory(examples).digest
    if say is not None:
        say(f"wrote {written} records to {memory_path} (memory {digest[:12]}); fitting the program's points")
    program = _program(fit_program_points(sources), digest, "detected")
    program_path.write_text(_pretty(program) + "\n")
    return written, program


def _pretty(program: Program) -> str:
    import json

    return json.dumps(json.loads(program.to_json()), indent=2, sort_keys=True)


def held_out(
    name: str, sources: Mapping[str, Sequence[Labelled]], *, resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """One source held out: memory and points from the others only; its pin units scored and summarised
    overall, over SVEN's Python families, and per family."""
    rest = _without(sources, name)
    points = fit_program_points(rest)
    units = score_units(_pins(sources[name]), memory_of(_items(rest)))
    out: dict[str, Any] = {
        "memory_sources": sorted(rest),
        "points": {f: round(p.advisory, 4) for f, p in sorted(points.items())},
        "overall": summarise(units, points, resamples=resamples, seed=seed),
    }
    python = _sven_python(units)
    if python and len(python) < len(units):
        out["python_families"] = summarise(python, points, resamples=resamples, seed=seed)
    out["by_family"] = _by_family(units, points, resamples, seed)
    return out


def _sven_python(units: Sequence[Unit]) -> list[Unit]:
    """The Python units of SVEN's families."""
    return [u for u in units if u.item.language == "python" and u.item.family in PYTHON_FAMILIES]


def _by_family(
    units: Sequence[Unit], points: Mapping[str, OperatingPoint], resamples: int, seed: int
) -> dict[str, Any]:
    return {
        family: summarise(
            [u for u in units if u.item.family == family], points, resamples=resamples, seed=seed
        )
        for family in sorted({u.item.family for u in units})
    }


def evaluate(
    corpora: Path | None,
    cache: Path,
    *,
    jobs: int = 1,
    resamples: int = 1000,
    seed: int = 0,
    say: Say | None = None,
) -> dict[str, Any]:
    """Every evaluated source held out, with priors detected and off, and the difference (what rests on
    them)."""
    result: dict[str, Any] = {"resamples": resamples, "seed": seed, "sources": {}}
    by_priors = {
        priors: analyse_all(corpora, cache, priors, jobs=jobs, say=say) for priors in ("detected", "off")
    }
    for name in EVALUATED:
        if name not in by_priors["detected"]:
            continue
        if say is not None:
            say(f"scoring {name} held out")
        result["sources"][name] = _with_and_without_priors(name, by_priors, resamples, seed)
    return result


def _with_and_without_priors(
    name: str, by_priors: Mapping[str, Mapping[str, Sequence[Labelled]]], resamples: int, seed: int
) -> dict[str, Any]:
    """A source held out with priors detected and off, and the difference between the two."""
    runs = {p: held_out(name, by_priors[p], resamples=resamples, seed=seed) for p in ("detected", "off")}
    return {**runs, "difference": _difference(runs["detected"], runs["off"])}


def _difference(on: Mapping[str, Any], off: Mapping[str, Any]) -> dict[str, Any]:
    """detected - off of the decider's J and PR-AUC per stratum: the share of the result that rests on
    priors."""
    out: dict[str, Any] = {}
    for stratum in ("overall", "python_families"):
        if stratum in on and stratum in off:
            out[stratum] = {
                stat: _minus(on[stratum]["decider"].get(stat), off[stratum]["decider"].get(stat))
                for stat in ("j", "pr_auc")
            }
    return out


def _minus(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> float | None:
    if not a or not b or a.get("value") is None or b.get("value") is None:
        return None
    return round(float(a["value"]) - float(b["value"]), 3)


def _cell(row: Mapping[str, Any] | None, stat: str) -> str:
    value = (row or {}).get(stat) or {}
    if value.get("value") is None:
        return "n/a"
    if value.get("low") is None:
        return f"{value['value']:.2f}"
    return f"{value['value']:.2f} [{value['low']:.2f}, {value['high']:.2f}]"


def _strata(run: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    rows = [("overall", run["overall"])]
    if "python_families" in run:
        rows.append(("Python families (" + ", ".join(PYTHON_FAMILIES) + ")", run["python_families"]))
    rows += [(f"`{family}`", summary) for family, summary in run["by_family"].items()]
    return rows


def render(result: Mapping[str, Any], command: str) -> str:
    """The evaluation as markdown: each held-out source with priors detected beside the instruments alone,
    then what rests on the priors."""
    lines = [
        f"Measured with `{command}`: each source held out in turn (its memory and its ADVISORY points built "
        "from the "
        "other sources only), the memory-vote program at $0, pin units (a function alone, as `ouro scan` "
        "sees it; no "
        f"delta feature); 95% intervals from {result['resamples']} resamples of repositories (a benchmark "
        "case is "
        "its own).",
        "",
        "| held out | stratum | units (+) | reached | decider @ADVISORY: TPR | FPR | Youden J | precision | "
        "PR-AUC | "
        "vulnerable side above fixed | any quick-rule finding: J | Bandit alone: J |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += _held_out_rows(result["sources"])
    lines += [
        "",
        "What rests on the framework priors (`--priors detected` against `--priors off`, same units):",
        "",
        "| held out | stratum | J detected | J off | difference "
        "| PR-AUC detected | PR-AUC off | difference |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += _priors_rows(result["sources"])
    return "\n".join(lines) + "\n"


def _held_out_rows(sources: Mapping[str, Any]) -> list[str]:
    """Each held-out source's strata with units, priors detected."""
    return [
        _held_out_row(name, stratum, row)
        for name, runs in sources.items()
        for stratum, row in _strata(runs["detected"])
        if row.get("units")
    ]


def _priors_rows(sources: Mapping[str, Any]) -> list[str]:
    """Each held-out source's overall and Python-family strata, priors detected against off."""
    return [
        _priors_row(name, stratum, runs)
        for name, runs in sources.items()
        for stratum in ("overall", "python_families")
        if stratum in runs["detected"]
    ]


def _held_out_row(name: str, stratum: str, row: Mapping[str, Any]) -> str:
    """A held-out source's stratum: the decider at ADVISORY beside the quick rules and Bandit alone."""
    d = row["decider"]
    bandit = _cell(row.get("bandit_any"), "j") if "bandit_any" in row else "no coverage"
    return (
        f"| {name} | {stratum} | {row['units']} ({row['positive']}) | {row['reached']} | "
        f"{_cell(d, 'tpr')} | "
        f"{_cell(d, 'fpr')} | **{_cell(d, 'j')}** | {_cell(d, 'precision')} | {_cell(d, 'pr_auc')} | "
        f"{_cell(d, 'pairwise_order')} | {_cell(row['quick_rules_any'], 'j')} | {bandit} |"
    )


def _priors_row(name: str, stratum: str, runs: Mapping[str, Any]) -> str:
    """A held-out source's J and PR-AUC with priors detected and off, and their differences."""
    on, off, diff = (
        runs["detected"][stratum]["decider"],
        runs["off"][stratum]["decider"],
        runs["difference"],
    )
    shown = "overall" if stratum == "overall" else "Python families"
    return (
        f"| {name} | {shown} | {_cell(on, 'j')} | {_cell(off, 'j')} | {diff[stratum]['j']} | "
        f"{_cell(on, 'pr_auc')} | {_cell(off, 'pr_auc')} | {diff[stratum]['pr_auc']} |"
    )

"""Leave-one-source-out: the held-out source's cases never reach the memory nor the fitted points, a live flow
is always reported and a guarded one never, the figures sit beside the instruments alone, and the shipped
memory and its program are rebuilt together from the sources (here the synthetic seed alone, which is
fast)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ouroboros_gates.decider.features import FEATURES
from ouroboros_gates.decider.learn import ship as ship_module
from ouroboros_gates.decider.learn.corpus import Labelled, analyse_source, locate
from ouroboros_gates.decider.learn.loso import Unit, _advisory, fit_points, flagged, memory_of, summarise
from ouroboros_gates.decider.learn.sources import default_allow_list, load_sources
from ouroboros_gates.decider.program import OperatingPoint, Program
from ouroboros_gates.decider.shipped import load_rows, load_shipped


def record(hits: int, evidence: str = "none") -> tuple[dict[str, Any], dict[str, str]]:
    x: dict[str, Any] = {spec.name: None for spec in FEATURES}
    x |= {"qr.enabled_hits": hits, "lang.python": True, "taint.evidence": evidence}
    return x, {"qr": "ran", "lang": "ran", "taint": "ran"}


def unit(source: str, i: int, y: int, evidence: str = "none", family: str = "sql_injection") -> Labelled:
    return Labelled(
        source,
        f"{source}:{i}",
        f"pair{i // 2}",
        f"{source}/repo{i // 2}",
        family,
        "python",
        "pin",
        "vulnerable" if y else "fixed",
        y,
        (record(y * 3, evidence),),
        bool(y),
        False,
        bool(y),
        False,
    )


def test_advisory_is_the_highest_threshold_reaching_recall_with_live_always_and_guarded_never() -> None:
    rows = [(0.9, "none", 1), (0.8, "none", 1), (0.7, "live", 1), (0.2, "guarded", 1), (0.6, "none", 0)]
    # 4 positives: 0.9 of them is 4 (ceil 3.6); the live one counts, the guarded one cannot: unreachable ->
    # lowest
    assert _advisory(rows) == 0.8
    assert _advisory([(0.9, "none", 1)] * 9 + [(0.3, "none", 1)]) == 0.9
    assert _advisory([(0.1, "live", 1)] * 10) == 1.0  # every positive is a live flow: only they are reported
    point = {"*": OperatingPoint(advisory=0.95)}
    assert flagged(Unit(unit("a", 1, 1), ((0.1, "live"),)), point)
    assert not flagged(Unit(unit("a", 2, 1), ((0.99, "guarded"),)), point)


def test_a_held_out_source_never_reaches_its_memory_or_its_points() -> None:
    sources = {name: [unit(name, i, i % 2) for i in range(8)] for name in ("a", "b", "c")}
    memory = memory_of([*sources["b"], *sources["c"]])
    assert {e.source for e in memory.examples} == {"b", "c"}
    result = ship_module.held_out("a", sources, resamples=50)
    assert result["memory_sources"] == ["b", "c"]
    overall = result["overall"]
    assert overall["units"] == 8 and overall["positive"] == 4
    assert set(overall) >= {"decider", "quick_rules_any", "bandit_any"}
    assert overall["decider"]["pr_auc"]["value"] == 1.0  # the label is in the features: perfectly ranked
    assert overall["decider"]["pairwise_order"]["value"] == 1.0 and overall["pairs"] == 4


def test_summarise_reports_no_bandit_row_where_bandit_has_no_coverage() -> None:
    units = [Unit(unit("j", i, i % 2), ((0.5, "none"),)) for i in range(4)]
    java = [Unit(Labelled(**{**vars(u.item), "language": "java"}), u.scores) for u in units]
    points = fit_points(units)
    assert "bandit_any" in summarise(units, points, resamples=20) and "bandit_any" not in summarise(
        java, points, resamples=20
    )


def test_ship_rebuilds_the_memory_and_the_program_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed = [s for s in load_sources(default_allow_list()) if s.id == "seed"]
    monkeypatch.setattr(ship_module, "shipped_sources", lambda: seed)
    memory_path, program_path = tmp_path / "shipped.json.gz", tmp_path / "memory-vote-static.json"
    written, program = ship_module.ship(
        None, tmp_path / "cache", memory_path=memory_path, program_path=program_path
    )
    assert written == len(load_rows(memory_path)[1]) > 40
    assert program.memory == load_shipped(memory_path).digest and Program.load(program_path) == program
    assert program.priors == "detected" and "*" in program.operating_points
    _again, _ = ship_module.ship(
        None, tmp_path / "cache", memory_path=tmp_path / "again.json.gz", program_path=tmp_path / "again.json"
    )
    assert (
        tmp_path / "again.json.gz"
    ).read_bytes() == memory_path.read_bytes()  # reproducible, from the cache
    cached = analyse_source(locate(seed[0], None), "detected", tmp_path / "cache")
    assert len(cached) == written and all(item.records for item in cached)

"""audit-leaks: a signal that follows the pair's side is flagged above 0.20; reach is reported beside it.
And the pairs as the instruments see them: a small git history per pair, reach misses without a record."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from _learn_fixtures import small_corpus, unit

from ouroboros_gates.decider.learn.labels import build_labels
from ouroboros_gates.decider.learn.leaks import audit_leaks
from ouroboros_gates.decider.learn.materialise import analyse_units, from_json, history, to_json
from ouroboros_gates.schemas import InstrumentState, State


def _record(x: dict[str, Any], engine: State = State.RAN) -> Any:
    instruments = {"qr": InstrumentState(state=State.RAN), "engine": InstrumentState(state=engine)}
    return SimpleNamespace(record=SimpleNamespace(x=x, instruments=instruments))


def test_a_side_tracking_signal_is_flagged() -> None:
    units, analysed = [], {}
    for g in range(10):
        v = unit(f"r/{g}", "sql_injection", 1, direction="vulnerable", n=g)
        f = unit(f"r/{g}", "sql_injection", 0, direction="fixed", n=g)
        units += [v, f]
        # lines grow on the fixed side in 8 of 10 pairs; hits differ in 1 of 10; the engine "fails" on fixed
        # sides
        analysed[v.uid] = _record({"facts.lines": 10, "qr.hits": 2 if g == 0 else 1, "eng.kind": "sql"})
        analysed[f.uid] = _record(
            {"facts.lines": 14 if g < 8 else 10, "qr.hits": 1, "eng.kind": "sql"},
            engine=State.FAILED if g < 5 else State.RAN,
        )
    found = audit_leaks(units, analysed)
    by = {r["signal"]: r for r in found["signals"]}
    assert by["facts.lines"]["separation"] == 0.8 and by["facts.lines"]["flagged"]
    assert by["qr.hits"]["separation"] == 0.1 and not by["qr.hits"]["flagged"]
    assert by["engine.<state>"]["separation"] == 0.5 and by["engine.<state>"]["flagged"]
    assert by["eng.kind"]["separation"] == 0.0
    assert found["flagged"] == ["facts.lines", "engine.<state>"]
    assert found["pairs"] == 10 and found["surfaced"]["separation"] == 0.0


def test_a_delta_signal_that_follows_how_the_pair_was_made_is_flagged() -> None:
    units, analysed = [], {}
    for g in range(10):
        introducing = unit(f"r/{g}", "sql_injection", 1, direction="introducing", n=g)
        repair = unit(f"r/{g}", "sql_injection", 0, direction="repair", n=g)
        units += [introducing, repair]
        # a repair adds a test in 9 of 10 pairs, so its reversal removes one; the changed lines are the same
        analysed[introducing.uid] = _record(
            {"delta.tests": "fewer" if g else "same", "delta.changed_lines": 4}
        )
        analysed[repair.uid] = _record({"delta.tests": "more" if g else "same", "delta.changed_lines": 4})
    found = audit_leaks(units, analysed)
    by = {r["signal"]: r for r in found["delta_signals"]}
    assert by["delta.tests"]["separation"] == 0.9 and by["delta.tests"]["flagged"]
    assert by["delta.changed_lines"]["separation"] == 0.0
    assert found["delta_flagged"] == ["delta.tests"] and found["delta_pairs"] == 10
    assert found["pairs"] == 0 and found["signals"] == []  # no pin unit was given


def test_history_and_reach(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shas = history(root, "src/module.py", ["a = 1\n", "a = 2\n", "a = 1\n"])
    assert len(shas) == 3 and len(set(shas)) == 3
    allow = small_corpus(tmp_path)
    labels = build_labels([tmp_path / "pairs"], allow)
    some = [u for u in labels.units if u.source_ref in ("python-delete-note", "python-ping-timeout")]
    got = analyse_units(some, tmp_path / "work")
    assert set(got) == {u.uid for u in some}
    vulnerable = next(u for u in some if u.direction == "vulnerable")
    item = got[vulnerable.uid]
    assert (
        item is not None
        and item.candidate.function == "delete_note"
        and item.candidate.family == "sql_injection"
    )
    introducing = got[next(u.uid for u in some if u.direction == "introducing")]
    assert introducing is not None and introducing.changed_lines and introducing.record.base is not None
    assert from_json(to_json(item)) == item and to_json(None) is None

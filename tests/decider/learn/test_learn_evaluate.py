"""Evaluation end to end on a scorer written for the test: per-family strata or "insufficient data", reach
misses counted against recall, the pooled row, the markdown report and the adopted points."""

from __future__ import annotations

import hashlib

from _learn_fixtures import unit

from ouroboros_gates.decider.learn.evaluate import Score, evaluate
from ouroboros_gates.decider.learn.folds import Fold, plan_folds
from ouroboros_gates.decider.learn.labels import LabelledUnit, LabelSet
from ouroboros_gates.decider.learn.report import render_markdown


def _noise(uid: str) -> float:
    return int(hashlib.sha256(uid.encode()).hexdigest()[:6], 16) / 2**24


def test_strata_reach_and_report() -> None:
    units: list[LabelledUnit] = []
    for family, groups in (("sql_injection", 60), ("xss", 6)):
        for g in range(groups):
            for y in (0, 1):
                for n in range(2):
                    units.append(unit(f"{family}/{g}", family, y, n=n, language="python" if g % 2 else "c"))
    labels = LabelSet(units=tuple(units), sources=("s",), excluded={})
    plan = plan_folds(units, seed=4)
    missed = {u.uid for u in units if u.y == 1 and _noise(u.uid) < 0.1}

    def scorer(u: LabelledUnit, fold: Fold) -> Score:
        assert u.group in fold.eval_groups
        if u.uid in missed:
            return Score(0.0, reach_miss=True)
        return Score(min(0.99, max(0.01, 0.35 * u.y + 0.65 * _noise(u.uid))))

    result = evaluate(labels, plan, scorer, resamples=300, program={"kind": "test", "id": "t"})
    data = result.data
    sql, xss = data["families"]["sql_injection"], data["families"]["xss"]
    xss_groups = len({p.group for p in result.predictions if p.family == "xss"})
    assert xss_groups < 10 and xss["insufficient"] == f"insufficient data ({xss_groups} repositories)"
    assert sql["insufficient"] is None and sql["recall_advisory"]["value"] is not None
    evaluated = [p for p in result.predictions if p.family == "sql_injection"]
    misses = [p for p in evaluated if p.uid in missed]
    assert misses and all(p.action == "DROP" for p in misses)  # never credited: DROP, against recall
    positives = [p for p in evaluated if p.y == 1 and p.delta]
    surfaced = [p for p in positives if p.uid not in missed]
    assert sql["recall_advisory"]["value"] <= len(surfaced) / len(positives) + 1e-9
    assert data["reach"]["sql_injection"]["surfaced"] < data["reach"]["sql_injection"]["positives"]
    assert data["usd"] == 0 and data["evaluated_units"] == sum(
        1 for u in units if any(u.group in f.eval_groups for f in plan.outer)
    )
    assert set(data["adopted"]["operating_points"]) <= set(data["adopted"]["calibration"]["per_family"])
    text = render_markdown(data)
    assert "| `xss` |" in text and "insufficient data (" in text and "| `sql_injection` |" in text
    assert "### By language" in text and "| `c` |" in text and "| `python` |" in text


def test_pin_units_measured_beside_delta_units() -> None:
    """A program that tells changes apart but not functions: PR-AUC near 1 on delta units, near the base rate
    on pin units, both in the JSON (per stratum and side by side) and on the report's PR-AUC line."""
    units: list[LabelledUnit] = []
    for g in range(40):
        for y in (0, 1):
            units.append(unit(f"r/{g}", "memory_safety", y, language="c"))
            units.append(
                unit(f"r/{g}", "memory_safety", y, direction="vulnerable" if y else "fixed", language="c")
            )
    labels = LabelSet(units=tuple(units), sources=("s",), excluded={})
    plan = plan_folds(units, seed=1)

    def scorer(u: LabelledUnit, fold: Fold) -> Score:
        if u.is_delta:
            return Score(0.6 + 0.3 * _noise(u.uid) if u.y else 0.1 + 0.3 * _noise(u.uid))
        return Score(0.45 + 0.1 * _noise(u.uid))  # a function and its fix look alike

    data = evaluate(labels, plan, scorer, resamples=300).data
    delta, pin = data["pooled"]["pr_auc"], data["pooled"]["pr_auc_pin"]
    assert delta["value"] > 0.95 and delta["low"] <= delta["value"] <= delta["high"]
    assert pin["value"] < 0.8 and pin["low"] <= pin["value"] <= pin["high"]
    family = data["families"]["memory_safety"]
    assert data["pr_auc"]["pin_units"] == {"*": pin, "memory_safety": family["pr_auc_pin"]}
    assert data["pr_auc"]["delta_units"] == {"*": delta, "memory_safety": family["pr_auc"]}
    text = render_markdown(data)
    shown = f"{pin['value']:.2f} [{pin['low']:.2f}, {pin['high']:.2f}] on pin units"
    assert f"PR-AUC (pooled): {delta['value']:.2f} [" in text and shown in text and "`memory_safety` " in text
    assert "| PR-AUC (deltas) | PR-AUC (pins) |" in text

"""Outer-fold evaluation: score every unit with memory outside its fold, calibrate cross-fitted, choose the
operating points on the other folds, and summarise with repository-cluster bootstrap intervals.

Scoring is in ``scoring`` and the cross-fitted calibration and operating points in ``crossfit``. The
program is a ``Scorer``: ``scorer(unit, fold) -> Score``. It must retrieve only examples the fold
allows (none of its evaluation groups); the memory-vote program does so through ``retrieve.eligible``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ouroboros_gates.decider.learn.calibrate import CalibrationCheck, calibration_check, fit_map
from ouroboros_gates.decider.learn.crossfit import calibration_rows, cross_fit
from ouroboros_gates.decider.learn.folds import Fold, FoldPlan
from ouroboros_gates.decider.learn.labels import LabelSet
from ouroboros_gates.decider.learn.metrics import (
    Interval,
    Prediction,
    average_precision,
    cluster_bootstrap,
    summarise,
)
from ouroboros_gates.decider.learn.operating import Scored, choose_points
from ouroboros_gates.decider.learn.scoring import ALL, Raw, Score, Scorer, score_folds

__all__ = ["ALL", "Evaluation", "Raw", "Score", "Scorer", "cross_fit", "evaluate", "score_folds"]


def _withhold_block(preds: list[Prediction], family: str | None) -> list[Prediction]:
    """ADVISORY only: BLOCK becomes ADVISORY (the calibration check failed)."""
    from dataclasses import replace

    return [
        replace(p, action="ADVISORY") if p.action == "BLOCK" and family in (None, p.family) else p
        for p in preds
    ]


def _block_folds(points: dict[str, dict[str, Any]], family: str) -> str:
    """In how many folds the other folds' predictions reached a BLOCK threshold: ``k/n``."""
    offered = sum(1 for fold in points.values() if fold.get(family, {}).get("block") is not None)
    return f"{offered}/{len(points)}"


def _reach(raws: Sequence[Raw]) -> dict[str, Any]:
    """Labelled positives an instrument surfaced, per family (reach misses count against recall)."""
    return {family: _reach_of(raws, family) for family in sorted({r.unit.family for r in raws})}


def _reach_of(raws: Sequence[Raw], family: str) -> dict[str, int]:
    """A family's labelled positives, and how many of them an instrument surfaced."""
    pos = [r for r in raws if r.unit.family == family and r.unit.y == 1]
    return {"positives": len(pos), "surfaced": sum(not r.score.reach_miss for r in pos)}


def _adopted(raws: Sequence[Raw], preds: Sequence[Prediction]) -> dict[str, Any]:
    """What an adopted program carries: the map refitted on all out-of-fold predictions, and operating points
    chosen on all of them (each fold's own were chosen without it)."""
    cmap = fit_map(calibration_rows(raws, None))
    points = {family: vars(choose_points(_surfaced_deltas(preds, family))) for family in sorted(cmap.params)}
    return {"calibration": cmap.as_dict(), "operating_points": points}


def _surfaced_deltas(preds: Sequence[Prediction], family: str) -> list[Scored]:
    """A family's calibrated, surfaced delta units, as the operating points are chosen on them."""
    return [Scored(p.p, p.y, p.unsure) for p in preds if p.p is not None and _surfaced_delta(p, family)]


def _surfaced_delta(p: Prediction, family: str) -> bool:
    """Whether a prediction is a delta unit of the family that an instrument surfaced."""
    return p.family == family and p.delta and not p.reach_miss


def _raw_pr_auc(
    raws: Sequence[Raw], resamples: int, seed: int
) -> tuple[float | None, float | None, float | None]:
    if not raws:
        return None, None, None
    y = np.array([r.unit.y for r in raws], dtype=np.float64)
    s = np.array([r.score.s for r in raws], dtype=np.float64)

    def pr_auc(idx: NDArray[np.int64]) -> float | None:
        return average_precision(y[idx], s[idx])

    low, high = cluster_bootstrap([r.unit.group for r in raws], pr_auc, resamples=resamples, seed=seed)
    return pr_auc(np.arange(len(raws), dtype=np.int64)), low, high


def _held_out(
    labels: LabelSet, folds: Sequence[Fold], scorer: Scorer, resamples: int, seed: int
) -> dict[str, Any]:
    """Leave-one-source-out / leave-one-framework-out: the raw score's PR-AUC on each held-out slice (with its
    interval), or why the slice is not evaluated."""
    out: dict[str, Any] = {}
    for fold in folds:
        if fold.insufficient is not None:
            out[fold.name] = fold.insufficient
        else:
            out[fold.name] = _held_out_slice(labels, fold, scorer, resamples, seed)
    return out


def _held_out_slice(
    labels: LabelSet, fold: Fold, scorer: Scorer, resamples: int, seed: int
) -> dict[str, Any]:
    """One held-out slice: its repositories, the units an instrument surfaced, and their raw PR-AUC."""
    raws = [r for r in score_folds(labels.units, [fold], scorer) if not r.score.reach_miss]
    value, low, high = _raw_pr_auc(raws, resamples, seed)
    return {
        "repositories": len(fold.eval_groups),
        "scored_units": len(raws),
        "pr_auc_raw": Interval(value, low, high).as_dict(),
    }


@dataclass(frozen=True)
class Evaluation:
    """The report's content: per-family and per-language strata, the pooled row, calibration and points."""

    data: dict[str, Any]
    predictions: tuple[Prediction, ...]


def _stratum(preds: Sequence[Prediction], resamples: int, seed: int, check: bool) -> dict[str, Any]:
    out = summarise(preds, resamples=resamples, seed=seed)
    if check and out["insufficient"] is None:
        out |= _block_check(preds, resamples, seed)
    return out


def _block_check(preds: Sequence[Prediction], resamples: int, seed: int) -> dict[str, Any]:
    """Whether BLOCK may be offered: the calibration holds on the surfaced units and some unit reaches it."""
    scored = _surfaced(preds)
    if not scored:
        return {"block_offered": False, "block_reason": "nothing surfaced"}
    cal = _calibration(scored, resamples, seed)
    reachable = any(p.action == "BLOCK" for p in preds)
    offered = cal.holds and reachable
    return {
        "calibration": cal.as_dict(),
        "block_offered": offered,
        "block_reason": _withheld_because(offered, reachable),
    }


def _surfaced(preds: Sequence[Prediction]) -> list[Prediction]:
    """The calibrated units an instrument surfaced (the map was fitted on surfaced units)."""
    return [p for p in preds if p.p is not None and not p.reach_miss]


def _withheld_because(offered: bool, reachable: bool) -> str | None:
    """Why BLOCK is not offered: no unit reaches its threshold, or the calibration check failed."""
    if offered:
        return None
    return "precision_unreachable" if not reachable else "calibration"


def _calibration(scored: Sequence[Prediction], resamples: int, seed: int) -> CalibrationCheck:
    return calibration_check(
        [p.p or 0.0 for p in scored],
        [p.y for p in scored],
        [p.group for p in scored],
        resamples=min(resamples, 1000),
        seed=seed,
    )


def evaluate(
    labels: LabelSet,
    plan: FoldPlan,
    scorer: Scorer,
    *,
    resamples: int = 2000,
    seed: int = 0,
    program: dict[str, Any] | None = None,
    raws: Sequence[Raw] | None = None,
) -> Evaluation:
    """Evaluate a program on the outer folds (and report the other fold kinds' status)."""
    raws = list(raws) if raws is not None else score_folds(labels.units, plan.outer, scorer)
    per_family, detail = cross_fit(raws)
    pooled, pooled_detail = cross_fit(raws, pooled=True)
    uncalibrated = _uncalibrated_families(per_family)
    families, per_family = _families(per_family, uncalibrated, detail, resamples, seed)
    pooled_out = _stratum(pooled, resamples, seed, check=True)
    pooled_out["block_folds"] = _block_folds(pooled_detail["operating_points"], ALL)
    decided = _calibrated_families(per_family, uncalibrated)
    data = {
        "program": program or {},
        "label_set_digest": labels.digest,
        "folds_digest": plan.digest,
        "resamples": resamples,
        "units": len(labels.units),
        "groups": len(labels.groups()),
        "compile_groups": len(plan.compile_groups),
        "evaluated_units": len(raws),
        "usd": round(sum(r.score.usd for r in raws), 6),
        "reach": _reach(raws),
        "cached": all(r.score.cached for r in raws),
        "pooled": pooled_out,
        "pr_auc": _pr_auc(pooled_out, families),
        "families": families,
        "languages": _languages(decided, resamples, seed),
        "calibration_maps": detail["maps"],
        "operating_points": detail["operating_points"],
        "pooled_operating_points": pooled_detail["operating_points"],
        "adopted": _adopted(raws, per_family),
        "leave_one_source_out": _held_out(labels, plan.by_source, scorer, resamples, seed),
        "leave_one_framework_out": _held_out(labels, plan.by_framework, scorer, resamples, seed),
    }
    return Evaluation(data=data, predictions=tuple(per_family))


def _uncalibrated_families(per_family: Sequence[Prediction]) -> set[str]:
    """The families without a calibration map in some fold: no calibrated p there, so no engine decision and
    no number."""
    return {p.family for p in per_family if p.p is None}


def _calibrated_families(per_family: Sequence[Prediction], uncalibrated: set[str]) -> list[Prediction]:
    """The predictions of the families with a calibration map in every fold."""
    return [p for p in per_family if p.family not in uncalibrated]


def _pr_auc(pooled: dict[str, Any], families: dict[str, Any]) -> dict[str, Any]:
    """Both bases side by side: delta units (a change, as a push is decided; BLOCK's unit) and pin units (a
    function alone, as a scan sees it), pooled (``*``) and per measured family."""
    measured = {ALL: pooled, **{f: s for f, s in families.items() if not s.get("insufficient")}}
    return {
        "delta_units": {name: s.get("pr_auc") for name, s in measured.items()},
        "pin_units": {name: s.get("pr_auc_pin") for name, s in measured.items()},
    }


def _families(
    per_family: list[Prediction],
    uncalibrated: set[str],
    detail: dict[str, Any],
    resamples: int,
    seed: int,
) -> tuple[dict[str, Any], list[Prediction]]:
    """Each family's stratum (or why it has none), and the predictions with BLOCK withheld from a family
    whose calibration check failed."""
    families: dict[str, Any] = {}
    for family in sorted({p.family for p in per_family}):
        preds = _of_family(per_family, family)
        if family in uncalibrated:
            families[family] = _uncalibrated(preds)
            continue
        out = _stratum(preds, resamples, seed, check=True)
        if out.get("block_reason") == "calibration":
            per_family = _block_withheld(per_family, preds, family)
        out["block_folds"] = _block_folds(detail["operating_points"], family)
        families[family] = out
    return families, per_family


def _of_family(preds: Sequence[Prediction], family: str) -> list[Prediction]:
    """The predictions of one family."""
    return [p for p in preds if p.family == family]


def _block_withheld(
    per_family: Sequence[Prediction], preds: list[Prediction], family: str
) -> list[Prediction]:
    """The other families' predictions, then this family's with BLOCK withheld."""
    return [*(p for p in per_family if p.family != family), *_withhold_block(preds, family)]


def _uncalibrated(preds: Sequence[Prediction]) -> dict[str, Any]:
    n = len({p.group for p in preds})
    return {
        "units": len(preds),
        "repositories": n,
        "insufficient": f"insufficient data ({n} repositories)",
        "reason": "below the calibration floors in a fold",
    }


def _languages(decided: Sequence[Prediction], resamples: int, seed: int) -> dict[str, Any]:
    return {
        lang: summarise([p for p in decided if p.language == lang], resamples=resamples, seed=seed)
        for lang in sorted({p.language for p in decided})
    }

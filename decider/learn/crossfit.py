"""Cross-fitting: fold j's units are calibrated by a map fitted on the other folds' scores, and decided at
operating points chosen on the other folds' calibrated delta units (per family, or pooled as ``*``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ouroboros_gates.decider.learn.calibrate import CalibrationMap, fit_map
from ouroboros_gates.decider.learn.metrics import Prediction
from ouroboros_gates.decider.learn.operating import OperatingPoints, Scored, choose_points
from ouroboros_gates.decider.learn.scoring import ALL, Raw

__all__ = ["calibration_rows", "cross_fit"]


def calibration_rows(raws: Sequence[Raw], family: str | None) -> list[tuple[str, str, int, float]]:
    """The ``(family, group, y, s)`` rows a calibration map is fitted on (``*`` as the family when pooled)."""
    return [
        (ALL if family == ALL else r.unit.family, r.unit.group, r.unit.y, r.score.s)
        for r in raws
        if _fits(r, family)
    ]


def _fits(r: Raw, family: str | None) -> bool:
    """Whether a surfaced unit enters the fit for ``family`` (None or ``*``: every family)."""
    return (family in (None, ALL) or r.unit.family == family) and not r.score.reach_miss


def cross_fit(raws: Sequence[Raw], pooled: bool = False) -> tuple[list[Prediction], dict[str, Any]]:
    """Calibrate fold j with a map fitted on the other folds; choose operating points the same way.

    ``pooled`` fits one map and one pair of operating points across all families (the ``*`` stratum).
    """
    by_fold = _by_fold(raws)
    calibrated, maps = _calibrated(raws, by_fold, pooled)
    points: dict[str, dict[str, Any]] = {}
    preds: list[Prediction] = []
    for name in sorted(by_fold):
        chosen = _fold_points(calibrated, name, pooled)
        points[name] = {f: vars(op) for f, op in chosen.items()}
        preds += _fold_predictions(calibrated, name, chosen, pooled)
    return preds, {"maps": maps, "operating_points": points}


def _by_fold(raws: Sequence[Raw]) -> dict[str, list[Raw]]:
    """The scored units of each fold."""
    by_fold: dict[str, list[Raw]] = defaultdict(list)
    for r in raws:
        by_fold[r.fold].append(r)
    return by_fold


Calibrated = list[tuple[Raw, float | None]]


def _fold_predictions(
    calibrated: Calibrated, name: str, chosen: dict[str, OperatingPoints], pooled: bool
) -> list[Prediction]:
    """Fold ``name``'s predictions at its family's (or the pooled) operating points."""
    return [
        _prediction(r, p, chosen[ALL if pooled else r.unit.family], name)
        for r, p in calibrated
        if r.fold == name
    ]


def _calibrated(
    raws: Sequence[Raw], by_fold: dict[str, list[Raw]], pooled: bool
) -> tuple[Calibrated, dict[str, dict[str, Any]]]:
    """Each fold's units calibrated by a map fitted on the other folds (None: a reach miss); the maps."""
    calibrated: Calibrated = []
    maps: dict[str, dict[str, Any]] = {}
    for name, held in sorted(by_fold.items()):
        rest = _other_folds(raws, name)
        cmap: CalibrationMap = fit_map(calibration_rows(rest, ALL if pooled else None))
        maps[name] = cmap.as_dict()
        calibrated += [(r, _calibrate(cmap, r, pooled)) for r in held]
    return calibrated, maps


def _other_folds(raws: Sequence[Raw], name: str) -> list[Raw]:
    """The scored units of every fold but ``name``."""
    return [r for r in raws if r.fold != name]


def _calibrate(cmap: CalibrationMap, r: Raw, pooled: bool) -> float | None:
    return None if r.score.reach_miss else cmap.apply(ALL if pooled else r.unit.family, r.score.s)


def _fold_points(calibrated: Calibrated, name: str, pooled: bool) -> dict[str, OperatingPoints]:
    """Fold ``name``'s operating points per family (or pooled), chosen on the other folds' delta units."""
    families = {ALL} if pooled else _families_of(calibrated, name)
    return {f: choose_points(_elsewhere(calibrated, name, f, pooled)) for f in sorted(families)}


def _families_of(calibrated: Calibrated, name: str) -> set[str]:
    """The families fold ``name`` holds."""
    return {r.unit.family for r, _ in calibrated if r.fold == name}


def _elsewhere(calibrated: Calibrated, name: str, family: str, pooled: bool) -> list[Scored]:
    """The other folds' calibrated, surfaced delta units of ``family`` (every family when pooled)."""
    return [
        Scored(p, r.unit.y, r.score.unsure)
        for r, p in calibrated
        if p is not None and _chooses_points(r, name, family, pooled)
    ]


def _chooses_points(r: Raw, name: str, family: str, pooled: bool) -> bool:
    """Whether a calibrated unit helps choose fold ``name``'s points for ``family``: a surfaced delta unit of
    another fold, of that family unless pooled."""
    return (
        r.fold != name and r.unit.is_delta and not r.score.reach_miss and (pooled or r.unit.family == family)
    )


def _prediction(r: Raw, p_fitted: float | None, op: OperatingPoints, fold: str) -> Prediction:
    """A unit's out-of-fold prediction: a reach miss is DROP, an uncalibrated unit ADVISORY."""
    p = 0.0 if r.score.reach_miss else p_fitted
    action = op.action(p, r.score.unsure) if p is not None else "ADVISORY"
    action = "DROP" if r.score.reach_miss else action
    return Prediction(
        uid=r.unit.uid,
        group=r.unit.group,
        family=r.unit.family,
        language=r.unit.language,
        source=r.unit.source,
        direction=r.unit.direction,
        delta=r.unit.is_delta,
        y=r.unit.y,
        s=r.score.s,
        p=p,
        unsure=r.score.unsure,
        action=action,
        fold=fold,
        reach_miss=r.score.reach_miss,
    )

"""Calibration: Platt on a known miscalibration, cross-fitting, the check, and the ADVISORY-only downgrade."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from _learn_fixtures import unit

from ouroboros_gates.decider.learn.calibrate import calibration_check, fit_map, fit_platt, logit
from ouroboros_gates.decider.learn.evaluate import Raw, Score, cross_fit, evaluate
from ouroboros_gates.decider.learn.folds import plan_folds
from ouroboros_gates.decider.learn.labels import LabelSet


def _sample(n: int, a: float, b: float, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.02, 0.98, n)
    truth = 1 / (1 + np.exp(-(a * logit(s) + b)))
    return s, (rng.uniform(size=n) < truth).astype(int)


def test_platt_recovers_a_known_miscalibration() -> None:
    s, y = _sample(20000, 2.0, -0.5)
    a, b = fit_platt(list(s), list(y))
    assert a == pytest.approx(2.0, abs=0.1) and b == pytest.approx(-0.5, abs=0.1)


def test_floors_per_family_pooled_and_insufficient() -> None:
    rows = []
    for family, groups in (("big", 25), ("mid", 12), ("small", 4)):
        for g in range(groups):
            rows += [(family, f"{family}/{g}", 1, 0.8), (family, f"{family}/{g}", 0, 0.3)]
    cmap = fit_map(rows)
    assert cmap.mode == {"big": "per_family", "mid": "pooled"}
    assert cmap.insufficient == {"small": "insufficient data (4 repositories)"}
    assert cmap.apply("small", 0.9) is None and cmap.apply("big", 0.8) > cmap.apply("big", 0.3)  # type: ignore[operator]


def test_check_holds_when_calibrated_and_fails_when_not() -> None:
    s, y = _sample(4000, 1.0, 0.0, seed=2)
    groups = [f"g{i % 200}" for i in range(len(s))]
    good = calibration_check(list(s), list(y), groups, resamples=200)
    assert good.holds and good.ece <= 0.05 and len(good.bins) == 5
    s2, y2 = _sample(4000, 3.0, 0.0, seed=3)  # the raw score is far too timid
    bad = calibration_check(list(s2), list(y2), groups, resamples=200)
    assert not bad.holds and bad.slope[0] > 2


def test_cross_fitting_never_sees_the_fold() -> None:
    rng = np.random.default_rng(4)
    raws = []
    for g in range(90):
        fold = f"outer-{g % 3 + 1}"
        for y in (0, 1):
            s = float(
                np.clip(
                    0.5 + (0.3 if y else -0.3) * (1 if fold != "outer-1" else -1) + rng.normal(0, 0.1), 0, 1
                )
            )
            raws.append(Raw(unit(f"r/{g}", "fam", y, n=g), fold, Score(s)))
    preds, detail = cross_fit(raws)
    for name in ("outer-1", "outer-2", "outer-3"):
        expected = fit_map([("fam", r.unit.group, r.unit.y, r.score.s) for r in raws if r.fold != name])
        assert detail["maps"][name] == expected.as_dict()
    # fold 1's scores are inverted; a map that had seen them would not rank them backwards
    fold1 = [p for p in preds if p.fold == "outer-1"]
    assert np.mean([p.p for p in fold1 if p.y == 1]) < np.mean([p.p for p in fold1 if p.y == 0])


def test_failed_check_withholds_block(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    units, score = [], {}
    for g in range(600):
        for n in range(2):
            s = float(rng.uniform(0.97, 0.995) if rng.uniform() < 0.3 else rng.uniform(0.02, 0.97))
            u = unit(f"r/{g}", "fam", int(rng.uniform() < s), n=2 * g + n)
            units.append(u)
            score[u.uid] = s  # calibrated by construction: y ~ Bernoulli(s)
    labels = LabelSet(units=tuple(units), sources=("s",), excluded={})
    plan = plan_folds(units, seed=1)

    def separating(u, fold):  # type: ignore[no-untyped-def]
        return Score(score[u.uid])

    held = evaluate(labels, plan, separating, resamples=100)
    assert held.data["families"]["fam"]["block_offered"] is True
    assert any(p.action == "BLOCK" for p in held.predictions)

    evaluation = importlib.import_module(
        "ouroboros_gates.decider.learn.evaluate"
    )  # the module, not the function

    failing = calibration_check([0.9, 0.1, 0.9, 0.1], [0, 1, 0, 1], ["a", "a", "b", "b"], resamples=10)
    assert not failing.holds
    monkeypatch.setattr(evaluation, "calibration_check", lambda *a, **k: failing)
    withheld = evaluate(labels, plan, separating, resamples=100)
    fam = withheld.data["families"]["fam"]
    assert fam["block_offered"] is False and fam["block_reason"] == "calibration"
    assert not any(p.action == "BLOCK" for p in withheld.predictions)
    assert any(p.action == "ADVISORY" for p in withheld.predictions)

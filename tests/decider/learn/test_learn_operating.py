"""Operating points and metrics against hand-computed values."""

from __future__ import annotations

import math

import pytest

from ouroboros_gates.decider.learn.metrics import Prediction, average_precision, balanced_brier, summarise
from ouroboros_gates.decider.learn.operating import Scored, choose_points, wilson_interval


def test_wilson_against_hand_values() -> None:
    low, high = wilson_interval(8, 10)
    # p=0.8, z²=3.8415: centre (0.8 + 0.19207)/1.38415 = 0.71674, half 1.96·sqrt(0.016 + 0.0096)/1.38415
    # = 0.22656 -> [0.4902, 0.9433]
    assert low == pytest.approx(0.49016, abs=1e-4) and high == pytest.approx(0.94331, abs=1e-4)
    # n/n with n = 73 is the smallest all-correct count whose bound reaches 0.95
    assert wilson_interval(73, 73)[0] >= 0.95 > wilson_interval(72, 72)[0]
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_block_is_lowest_threshold_with_wilson_bound_and_unsure_never_blocks() -> None:
    scored = [Scored(0.9, 1) for _ in range(80)] + [Scored(0.6, 0) for _ in range(30)]
    scored += [Scored(0.95, 0, unsure=True)]  # a majority-unsure unit does not count against BLOCK
    points = choose_points(scored)
    assert points.block == 0.9 and points.advisory == 0.9
    assert points.action(0.97, unsure=True) == "ADVISORY" and points.action(0.97) == "BLOCK"
    few = choose_points([Scored(0.9, 1) for _ in range(20)] + [Scored(0.1, 0) for _ in range(20)])
    assert few.block is None and few.block_reason == "precision_unreachable" and few.advisory == 0.9


def test_advisory_is_highest_threshold_reaching_recall() -> None:
    scored = [Scored(p / 10, 1) for p in range(1, 11)] + [Scored(0.05, 0)]
    # recall >= 0.9 needs 9 of 10 positives: the threshold 0.2
    assert choose_points(scored).advisory == pytest.approx(0.2)


def test_average_precision_and_balanced_brier_by_hand() -> None:
    # ranked: 1 (P=1/1), 0, 1 (P=2/3): AP = (1 + 2/3) / 2
    assert average_precision([1, 0, 1], [0.9, 0.8, 0.7]) == pytest.approx(5 / 6)
    # a tie between a positive and a negative counts as one step: P = 1/2 at recall 1
    assert average_precision([1, 0], [0.5, 0.5]) == pytest.approx(0.5)
    rows = [("a", "g1", 1, 0.5)] * 10 + [("a", "g2", 1, 1.0)] + [("a", "g3", 0, 0.0)]
    # cell (a,1): g1 capped to 5 effective rows of error 0.25, g2 one row of 0 -> 1.25/6; cell (a,0): 0
    assert balanced_brier(rows) == pytest.approx((1.25 / 6 + 0.0) / 2)


def _pred(i: int, y: int, p: float, action: str, group: str, direction: str) -> Prediction:
    return Prediction(
        uid=str(i),
        group=group,
        family="f",
        language="python",
        source="s",
        direction=direction,
        delta=True,
        y=y,
        s=p,
        p=p,
        unsure=False,
        action=action,
        fold="outer-1",
    )


def test_summary_intervals_and_floor() -> None:
    preds = []
    for g in range(24):
        preds.append(
            _pred(2 * g, 1, 0.9 if g % 4 else 0.3, "BLOCK" if g % 4 else "DROP", f"r{g}", "introducing")
        )
        preds.append(_pred(2 * g + 1, 0, 0.2, "BLOCK" if g == 0 else "DROP", f"r{g}", "benign"))
    out = summarise(preds, resamples=300)
    assert out["insufficient"] is None
    assert out["recall_block"]["value"] == pytest.approx(18 / 24, abs=1e-4)
    assert out["false_blocks_per_100_benign"]["value"] == pytest.approx(100 / 24, abs=1e-3)
    low, high = out["recall_block"]["low"], out["recall_block"]["high"]
    assert low < 0.75 < high and high - low < 0.5
    few = summarise(preds[:10], resamples=50)
    assert few["insufficient"] == "insufficient data (5 repositories)" and "recall_block" not in few
    assert not math.isnan(out["pr_auc"]["value"])

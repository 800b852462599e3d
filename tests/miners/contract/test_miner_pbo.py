"""The PBO guard: a case computed by hand, the blocks, and when it waits for labels."""

from __future__ import annotations

import math

import pytest

from ouroboros_gates.miners import WAITS_FOR_LABELS, MinerUsageError, pbo
from ouroboros_gates.miners.pbo import blocks_of

# Eight labels in start order, four blocks of two (+, -). Knee 1 flags every positive and a2 (a false
# alarm in block 1), knee 2 every positive and nothing else, knee 3 only a1 and a3.
ORDERED = [(f"a{n}", n % 2 == 1) for n in range(1, 9)]
FLAGS = {1: {"a1", "a2", "a3", "a5", "a7"}, 2: {"a1", "a3", "a5", "a7"}, 3: {"a1", "a3"}}


def test_a_hand_computed_case() -> None:
    """By hand, halvings in combinations order (in-sample blocks; chosen; out-of-sample rank of 3):

    {1,2}, {1,3}, {1,4}: knee 2 chosen (ties knee 3 or wins); out of sample it ties knee 1 above knee 3:
        rank 1 + (2 + 1)/2 = 2.5, ω = 2.5/4, λ = ln(5/3) > 0
    {2,3}, {2,4}: knees 1 and 2 tie in sample, the smaller (1) is chosen; out of sample block 1's false
        alarm puts it below knee 2 and above knee 3 (which misses one): rank 2, ω = 1/2, λ = 0
    {3,4}: knee 1 chosen; out of sample it is last (knees 2 and 3 are perfect on blocks 1-2): rank 1,
        ω = 1/4, λ = ln(1/3)
    PBO = #{λ ≤ 0} / 6 = 3/6."""
    found = pbo(ORDERED, FLAGS)
    assert found.status == "computed" and found.value == pytest.approx(0.5)
    expected = [math.log(5 / 3)] * 3 + [0.0, 0.0, math.log(1 / 3)]
    assert found.logits == pytest.approx(expected)
    assert found.describe() == "0.50 (3 of 6 halvings with λ ≤ 0; S = 4 blocks)"


def test_a_rule_that_is_best_everywhere_does_not_overfit() -> None:
    flags = {1: {"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"}, 2: {"a1", "a3", "a5", "a7"}}
    found = pbo(ORDERED, flags)
    assert found.value == 0.0 and all(logit > 0 for logit in found.logits)


def test_blocks_are_contiguous_and_balanced() -> None:
    assert blocks_of(9, 4) == [range(0, 3), range(3, 5), range(5, 7), range(7, 9)]
    assert blocks_of(8, 4) == [range(0, 2), range(2, 4), range(4, 6), range(6, 8)]


def test_it_waits_for_a_positive_in_every_block() -> None:
    ordered = [("a", True), ("b", False), ("c", False), ("d", False), ("e", True), ("f", True)]
    found = pbo(ordered, FLAGS)
    assert found.status == WAITS_FOR_LABELS and found.value is None
    assert "block(s) 2 of S = 4 hold no positive" in found.reason


def test_it_waits_while_the_labels_cannot_fill_the_blocks() -> None:
    found = pbo(ORDERED[:3], FLAGS)
    assert found.status == WAITS_FOR_LABELS and "3 labels cannot fill S = 4 blocks" in found.describe()


def test_six_blocks_use_twenty_halvings() -> None:
    ordered = [(f"b{n}", n % 2 == 0) for n in range(12)]
    flags = {1: {i for i, _p in ordered}, 2: {i for i, p in ordered if p}}
    assert len(pbo(ordered, flags, blocks=6).logits) == math.comb(6, 3)


def test_fewer_than_two_candidates_is_nothing_to_judge() -> None:
    assert pbo(ORDERED, {2: FLAGS[2]}).status == "no choice to overfit"


@pytest.mark.parametrize("blocks", [2, 3, 5])
def test_blocks_must_be_even_and_at_least_four(blocks: int) -> None:
    with pytest.raises(MinerUsageError, match="S is even and at least 4"):
        pbo(ORDERED, FLAGS, blocks=blocks)

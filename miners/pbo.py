"""The PBO guard: the probability of backtest overfitting by combinatorially symmetric
cross-validation (Bailey, Borwein, López de Prado and Zhu 2016), over the knee candidates.

The labelled record, ordered by start, is cut into S contiguous blocks (S even, 4 by default; sizes
differ by at most one, the earlier blocks taking the extra label). Each of the C(S, S/2) halvings c
puts S/2 blocks in sample and the rest out of sample. In sample, the best candidate is chosen by the
backtest's own rule (``knee.best_knee``: precision s.t. FN = 0, ties to the smallest; when no
candidate misses nothing, the fewest misses, then precision). Out of sample, every candidate is
ranked by the same score (fewest misses, then precision; ties share their mean rank), the chosen
one's rank r of N gives the relative rank ω_c = r / (N + 1), and λ_c = ln(ω_c / (1 - ω_c)).

    PBO = #{c : λ_c ≤ 0} / C(S, S/2)

A chosen candidate that ties with every other out of sample sits at ω = 1/2, λ = 0, and counts as
overfit: its selection bought nothing. The guard waits for labels while the record cannot fill S
blocks each holding a positive, and has nothing to judge with fewer than two candidates.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from ouroboros_gates.miners.datalog import Value
from ouroboros_gates.miners.errors import MinerUsageError
from ouroboros_gates.miners.knee import confusion, performance

__all__ = ["DEFAULT_BLOCKS", "WAITS_FOR_LABELS", "Pbo", "blocks_of", "pbo"]

DEFAULT_BLOCKS = 4
WAITS_FOR_LABELS = "waits for labels"
COMPUTED = "computed"
NO_CHOICE = "no choice to overfit"


@dataclass(frozen=True)
class Pbo:
    """The guard's outcome: ``computed`` with a value and every halving's λ, or why not."""

    status: str
    value: float | None
    blocks: int
    logits: tuple[float, ...] = ()
    reason: str = ""

    def describe(self) -> str:
        """One line for the backtest block."""
        if self.value is None:
            return f"{self.status} ({self.reason})"
        halvings = f"{_overfit(self.logits)} of {len(self.logits)} halvings with λ ≤ 0"
        return f"{self.value:.2f} ({halvings}; S = {self.blocks} blocks)"


def _overfit(logits: Sequence[float]) -> int:
    """How many halvings chose a candidate that did no better out of sample (λ ≤ 0)."""
    return sum(logit <= 0 for logit in logits)


def blocks_of(count: int, blocks: int) -> list[range]:
    """``blocks`` contiguous index ranges covering ``count`` items, sizes differing by at most one."""
    size, extra = divmod(count, blocks)
    found, start = [], 0
    for number in range(blocks):
        end = start + size + (1 if number < extra else 0)
        found.append(range(start, end))
        start = end
    return found


def _rank(chosen: Value, scores: Mapping[Value, tuple[int, float]]) -> float:
    """The chosen candidate's 1-based rank among all (higher is better), ties at their mean rank."""
    mine = scores[chosen]
    below = sum(score < mine for score in scores.values())
    tied = sum(score == mine for score in scores.values())
    return below + (tied + 1) / 2


def _scores(
    flags: Mapping[Value, Collection[str]], instances: Sequence[str], positives: Collection[str]
) -> dict[Value, tuple[int, float]]:
    """Each candidate's score (fewest misses, then precision) on ``instances``."""
    return {kappa: performance(confusion(flagged, instances, positives)) for kappa, flagged in flags.items()}


def _in_sample_best(
    flags: Mapping[Value, Collection[str]], sample: Sequence[str], positives: Collection[str]
) -> Value:
    scores = _scores(flags, sample, positives)
    top = max(scores.values())
    return min(kappa for kappa, score in scores.items() if score == top)


def pbo(
    ordered: Sequence[tuple[str, bool]], flags: Mapping[Value, Collection[str]], blocks: int = DEFAULT_BLOCKS
) -> Pbo:
    """PBO over labelled instances ``ordered`` by start (``(instance, positive)``) and the candidates'
    flagged instances (``flags``: κ → flagged). ``blocks`` must be even and at least 4."""
    _check_blocks(blocks)
    positives = {instance for instance, positive in ordered if positive}
    parts = _parts(ordered, blocks)
    if (unjudged := _unjudged(len(ordered), len(flags), parts, positives)) is not None:
        return Pbo(unjudged[0], None, blocks, reason=unjudged[1])
    halvings = combinations(range(blocks), blocks // 2)
    logits = [_logit(parts, set(chosen), flags, positives) for chosen in halvings]
    return Pbo(COMPUTED, _overfit(logits) / len(logits), blocks, tuple(logits))


def _check_blocks(blocks: int) -> None:
    """``MinerUsageError`` unless S is even and at least 4."""
    if blocks < 4 or blocks % 2:
        raise MinerUsageError(
            f"PBO blocks S = {blocks}: S is even and at least 4 (S = 2 ranks too few labels)"
        )


def _parts(ordered: Sequence[tuple[str, bool]], blocks: int) -> list[list[str]]:
    """The instances of each of the ``blocks`` contiguous blocks, in order."""
    return [[ordered[i][0] for i in indices] for indices in blocks_of(len(ordered), blocks)]


def _unjudged(
    labels: int, candidates: int, parts: Sequence[Sequence[str]], positives: set[str]
) -> tuple[str, str] | None:
    """Why the guard cannot judge (its status and reason), or None when it can."""
    blocks = len(parts)
    if candidates < 2:
        return NO_CHOICE, f"{candidates} knee candidate(s)"
    if labels < blocks:
        return WAITS_FOR_LABELS, f"{labels} labels cannot fill S = {blocks} blocks"
    if empty := _without_positive(parts, positives):
        return WAITS_FOR_LABELS, f"block(s) {', '.join(map(str, empty))} of S = {blocks} hold no positive"
    return None


def _without_positive(parts: Sequence[Sequence[str]], positives: set[str]) -> list[int]:
    """The 1-based numbers of the blocks that hold no positive."""
    return [number for number, part in enumerate(parts, start=1) if positives.isdisjoint(part)]


def _logit(
    parts: Sequence[Sequence[str]],
    in_sample: Collection[int],
    flags: Mapping[Value, Collection[str]],
    positives: Collection[str],
) -> float:
    """λ of one halving: the logit of the in-sample choice's relative rank out of sample."""
    sample, held_out = _halves(parts, in_sample)
    chosen = _in_sample_best(flags, sample, positives)
    omega = _rank(chosen, _scores(flags, held_out, positives)) / (len(flags) + 1)
    return math.log(omega / (1 - omega))


def _halves(parts: Sequence[Sequence[str]], in_sample: Collection[int]) -> tuple[list[str], list[str]]:
    """The instances of the blocks in sample and those of the blocks held out, each in block order."""
    sample: list[str] = []
    held_out: list[str] = []
    for number, part in enumerate(parts):
        (sample if number in in_sample else held_out).extend(part)
    return sample, held_out

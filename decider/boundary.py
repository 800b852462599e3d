"""The boundary between the memory and a prompt: the fold a prompt is rendered in (evaluation or deployment)
and ``eligible(example, target, fold)``, the only way an example reaches a prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from ouroboros_gates.decider.memory import MemoryExample

__all__ = ["Boundary", "TargetLike", "cosine", "eligible", "ineligible_reason"]


class TargetLike(Protocol):
    """What the boundary reads of a retrieval target (``retrieve.Target``): its group and excerpt vector."""

    @property
    def group(self) -> str | None: ...
    @property
    def vector(self) -> np.ndarray | None: ...


@dataclass(frozen=True)
class Boundary:
    """The fold a prompt is rendered in: evaluation (groups, source, framework held out) or deployment."""

    mode: Literal["evaluation", "deployment"] = "deployment"
    evaluation_groups: frozenset[str] = frozenset()
    held_out_source: str | None = None
    held_out_framework: str | None = None
    near_duplicate_cos: float = 0.98


def cosine(u: np.ndarray | None, v: np.ndarray | None) -> float | None:
    """The cosine of two unit vectors; None when either is missing."""
    return None if u is None or v is None else float(np.dot(u, v))


def ineligible_reason(
    example: MemoryExample, target: TargetLike, fold: Boundary, vector: np.ndarray | None = None
) -> str | None:
    """Why an example may not reach this target's prompt in this fold, or None when it may."""
    if example.group in fold.evaluation_groups:
        return "evaluation_group"
    if target.group is not None and example.group == target.group:
        return "own_group" if fold.mode == "evaluation" else "self_excluded"
    held = _held_out(example, fold)
    if held is not None:
        return held
    if fold.mode == "evaluation" and _near_duplicate(vector, target, fold):
        return "near_duplicate"
    return None


def _held_out(example: MemoryExample, fold: Boundary) -> str | None:
    """Whether the fold holds out the example's source or one of its frameworks."""
    if fold.held_out_source is not None and example.source == fold.held_out_source:
        return "held_out_source"
    if fold.held_out_framework is not None and fold.held_out_framework in example.frameworks:
        return "held_out_framework"
    return None


def _near_duplicate(vector: np.ndarray | None, target: TargetLike, fold: Boundary) -> bool:
    cos = cosine(vector, target.vector)
    return cos is not None and cos >= fold.near_duplicate_cos


def eligible(
    example: MemoryExample, target: TargetLike, fold: Boundary, vector: np.ndarray | None = None
) -> bool:
    """The only gate between the memory and a prompt (retrieved examples and demonstrations alike)."""
    return ineligible_reason(example, target, fold, vector) is None

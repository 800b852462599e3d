"""How the decider earns the right to BLOCK: labels from allow-listed sources, repository-grouped folds,
compile, cross-fitted calibration, operating points, experiments and learning curves."""

from __future__ import annotations

from ouroboros_gates.decider.learn.calibrate import (
    CalibrationCheck,
    CalibrationMap,
    calibration_check,
    fit_map,
    fit_platt,
)
from ouroboros_gates.decider.learn.errors import (
    CatalogError,
    LearnError,
    RegistrationError,
    SourceNotAllowed,
    Unfinished,
)
from ouroboros_gates.decider.learn.evaluate import Evaluation, Score, Scorer, cross_fit, evaluate, score_folds
from ouroboros_gates.decider.learn.folds import Fold, FoldPlan, assert_disjoint, plan_folds
from ouroboros_gates.decider.learn.groups import merge_groups, normalise_repo
from ouroboros_gates.decider.learn.labels import LabelledUnit, LabelSet, build_labels
from ouroboros_gates.decider.learn.materialise import analyse_units
from ouroboros_gates.decider.learn.metrics import Prediction, summarise
from ouroboros_gates.decider.learn.operating import OperatingPoints, choose_points, wilson_interval
from ouroboros_gates.decider.learn.pairs import Pair, load_pairs
from ouroboros_gates.decider.learn.programs import ProgramScorer, build_memory
from ouroboros_gates.decider.learn.report import render_markdown
from ouroboros_gates.decider.learn.sources import default_allow_list, load_sources, resolve_source
from ouroboros_gates.decider.learn.workspace import Workspace

__all__ = [
    "CalibrationCheck",
    "CalibrationMap",
    "CatalogError",
    "Evaluation",
    "Fold",
    "FoldPlan",
    "LabelSet",
    "LabelledUnit",
    "LearnError",
    "OperatingPoints",
    "Pair",
    "Prediction",
    "ProgramScorer",
    "RegistrationError",
    "Score",
    "Scorer",
    "SourceNotAllowed",
    "Unfinished",
    "Workspace",
    "analyse_units",
    "assert_disjoint",
    "build_labels",
    "build_memory",
    "calibration_check",
    "choose_points",
    "cross_fit",
    "default_allow_list",
    "evaluate",
    "fit_map",
    "fit_platt",
    "load_pairs",
    "load_sources",
    "merge_groups",
    "normalise_repo",
    "plan_folds",
    "render_markdown",
    "resolve_source",
    "score_folds",
    "summarise",
    "wilson_interval",
]

"""The decider: candidates from a push or a scan, our instruments, and allow-listed feature records."""

from __future__ import annotations

from workers.decider.analyse import Analysed, analyse, candidates
from workers.decider.features import FEATURES, FeatureSpec, feature_set_digest, validate_record
from workers.decider.instruments import Signal

__all__ = [
    "FEATURES",
    "Analysed",
    "FeatureSpec",
    "Signal",
    "analyse",
    "candidates",
    "feature_set_digest",
    "validate_record",
]

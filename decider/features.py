"""The closed feature set, its digest, and the one gate every record passes: ``validate_record``.

Features are allow-listed, typed and repository-agnostic: no identifiers, paths, rule ids or label
fields, only bools, capped ints, floats in [0, 1] and closed enums. Missing is not zero: a feature of an
instrument whose state is not ``ran`` is ``null``; a ran instrument that saw nothing gives ``0``/``false``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from functools import cache
from typing import Literal

import orjson

from ouroboros_gates.decider.instruments.families import families
from ouroboros_gates.decider.languages import LANGUAGES
from ouroboros_gates.schemas import Candidate, FeatureRecord, InstrumentState, Profile, Scalar, State, Unit
from ouroboros_gates.schemas.errors import PermanentError

__all__ = [
    "EXCLUDED_FIELDS",
    "FEATURES",
    "INSTRUMENTS",
    "SCHEMA_VERSION",
    "FeatureError",
    "FeatureSpec",
    "build_record",
    "canonical_x",
    "feature_set_digest",
    "features_for",
    "validate_record",
]

SCHEMA_VERSION = 4
"""Bumped on any change to ``FEATURES``."""

INSTRUMENTS: tuple[str, ...] = ("bandit", "delta", "facts", "lang", "qr", "roles", "taint")
"""Every instrument of the static profile; a feature's name starts with its instrument."""

EXCLUDED_FIELDS: frozenset[str] = frozenset(
    {
        "base",
        "case",
        "commit",
        "cost",
        "declared_sites",
        "file",
        "fixed_pin",
        "function",
        "head",
        "in_fix_range",
        "label",
        "name",
        "path",
        "pin",
        "repo",
        "rule",
        "rule_id",
        "site_match",
        "usd",
        "y",
    }
)
"""Label information and identities: never a feature, refused by name wherever they appear."""

FeatureType = Literal["bool", "int", "float", "enum"]


class FeatureError(PermanentError, ValueError):
    """A record that breaks the feature discipline; the message names the feature and the source."""


@dataclass(frozen=True)
class FeatureSpec:
    """One allow-listed feature: its instrument, type (cap or vocabulary), profile and prior flag."""

    name: str
    instrument: str
    type: FeatureType
    cap: int | None = None
    vocabulary: tuple[str, ...] = ()
    profile: Profile = Profile.STATIC
    prior: bool = False
    nullable: bool = False


def _int(name: str, cap: int, *, prior: bool = False, nullable: bool = False) -> FeatureSpec:
    return FeatureSpec(name, name.split(".", 1)[0], "int", cap=cap, prior=prior, nullable=nullable)


def _bool(name: str) -> FeatureSpec:
    return FeatureSpec(name, name.split(".", 1)[0], "bool")


def _float(name: str) -> FeatureSpec:
    return FeatureSpec(name, name.split(".", 1)[0], "float")


def _enum(name: str, *vocabulary: str) -> FeatureSpec:
    return FeatureSpec(name, name.split(".", 1)[0], "enum", vocabulary=vocabulary)


_LEVELS = ("absent", "low", "medium", "high")


@cache
def _features() -> tuple[FeatureSpec, ...]:
    mechanisms = families().mechanisms
    specs = [
        *(_bool(f"lang.{language}") for language in LANGUAGES),
        _int("qr.enabled_hits", 20),
        _int("qr.shadow_hits", 20),
        _int("qr.other_family_hits", 20),
        _float("qr.max_precision_estimate"),
        _int("qr.prior_hits", 10, prior=True),
        *(_int(f"qr.mechanism.{mechanism}", 10) for mechanism in mechanisms),
        _int("bandit.issues", 10),
        _int("bandit.other_issues", 10),
        _enum("bandit.max_severity", *_LEVELS),
        _enum("bandit.max_confidence", *_LEVELS),
        _int("facts.callers", 40),
        _int("facts.caller_files", 20),
        _int("facts.entry_distance", 6),
        _bool("facts.is_global"),
        _int("facts.function_lines", 500),
        _int("facts.params", 10),
        _bool("facts.decorated"),
        _int("roles.sink_calls", 10),
        _int("roles.sink_depth_min", 3, nullable=True),
        _enum("roles.sink_origin", "absent", "language", "inferred_wrapper", "prior"),
        _float("roles.sink_confidence"),
        _bool("roles.sink_nonconstant"),
        _bool("roles.param_reaches_sink"),
        _bool("roles.is_wrapper"),
        _bool("roles.sanitizer_in_function"),
        _bool("roles.source_in_function"),
        _enum("roles.source_kind", "absent", "request", "server", "raw_body", "argv_stdin", "other"),
        _int("taint.flows", 10),
        _int("taint.sanitized_flows", 10),
        _enum("taint.source_kind", "absent", "parameter", "request", "environment", "argv_stdin", "other"),
        _bool("taint.external_source"),
        _bool("taint.via_call"),
        _int("taint.span_lines", 50, nullable=True),
        _int("taint.other_family_flows", 10),
        _enum("taint.evidence", "live", "guarded", "none"),
        _enum("delta.novelty", "new", "worsened", "unchanged", "unknown", "not_applicable"),
        _int("delta.changed_lines", 200),
        _bool("delta.sanitizer_removed"),
        _enum("delta.tests", "fewer", "same", "more", "no_base"),
    ]
    return tuple(specs)


FEATURES: tuple[FeatureSpec, ...] = _features()
"""The closed feature set, in a fixed order."""

_BY_NAME: dict[str, FeatureSpec] = {spec.name: spec for spec in FEATURES}


def features_for(profile: Profile = Profile.STATIC) -> tuple[FeatureSpec, ...]:
    """The features a program of ``profile`` may see (``plane`` sees the static ones too)."""
    return tuple(spec for spec in FEATURES if profile is Profile.PLANE or spec.profile is Profile.STATIC)


@cache
def feature_set_digest() -> str:
    """sha256 of the canonical ``FEATURES`` list (with ``SCHEMA_VERSION``)."""
    payload = {"schema_version": SCHEMA_VERSION, "features": [asdict(spec) for spec in FEATURES]}
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


def canonical_x(record: FeatureRecord | Mapping[str, Scalar]) -> bytes:
    """The record's ``x`` as canonical JSON bytes (sorted keys): equal features, equal bytes."""
    x = record.x if isinstance(record, FeatureRecord) else record
    return orjson.dumps(dict(x), option=orjson.OPT_SORT_KEYS)


def _check_value(spec: FeatureSpec, value: Scalar, where: str) -> None:
    if not _FITS.get(spec.type, _in_vocabulary)(spec, value):
        bound = f"cap {spec.cap}" if spec.cap is not None else (spec.vocabulary or spec.type)
        raise FeatureError(f"{where}: feature {spec.name!r}: {value!r} is not a {spec.type} within {bound}")


def _is_bool(spec: FeatureSpec, value: Scalar) -> bool:
    return isinstance(value, bool)


def _within_cap(spec: FeatureSpec, value: Scalar) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= (spec.cap or 0)


def _share(spec: FeatureSpec, value: Scalar) -> bool:
    return isinstance(value, float) and math.isfinite(value) and 0.0 <= value <= 1.0


def _in_vocabulary(spec: FeatureSpec, value: Scalar) -> bool:
    return isinstance(value, str) and value in spec.vocabulary


_FITS: dict[str, Callable[[FeatureSpec, Scalar], bool]] = {
    "bool": _is_bool,
    "float": _share,
    "int": _within_cap,
}
"""Whether a value fits its feature, per type (a categorical feature's: its vocabulary)."""


def _check_keys(x: Mapping[str, Scalar], source: str) -> None:
    for key in x:
        _check_key(key, source)
    _check_complete(x, source)


def _check_key(key: str, source: str) -> None:
    """Refuse a key that is label information or an identity, or not an allow-listed feature."""
    leaf = key.rsplit(".", 1)[-1]
    if key in EXCLUDED_FIELDS or leaf in EXCLUDED_FIELDS:
        raise FeatureError(f"{source}: {key!r} is label information or an identity, never a feature")
    if key not in _BY_NAME:
        raise FeatureError(f"{source}: {key!r} is not an allow-listed feature")


def _check_complete(x: Mapping[str, Scalar], source: str) -> None:
    """Refuse a record missing a feature (a feature is nulled, never dropped)."""
    for spec in features_for(Profile.STATIC):
        if spec.name not in x:
            raise FeatureError(f"{source}: feature {spec.name!r} is missing (null it, never drop it)")


def validate_record(
    record: FeatureRecord | Mapping[str, Scalar],
    instruments: Mapping[str, InstrumentState] | None = None,
    *,
    source: str = "record",
) -> None:
    """Refuse unknown or excluded keys, values outside their type, non-null features of an instrument
    that did not run, and a record built for another feature set. ``source`` names where it came from.
    """
    if isinstance(record, FeatureRecord):
        x: Mapping[str, Scalar] = record.x
        states: Mapping[str, InstrumentState] = record.instruments
        _check_feature_set(record, source)
    else:
        x, states = record, instruments or {}
    _check_keys(x, source)
    for key, value in x.items():
        _check_feature(_BY_NAME[key], value, states, source)


def _check_feature_set(record: FeatureRecord, source: str) -> None:
    """Refuse a record built for another feature set (its digest or schema version differs)."""
    if record.feature_set_digest != feature_set_digest() or record.schema_version != SCHEMA_VERSION:
        raise FeatureError(f"{source}: built for another feature set (digest or schema_version differs)")


def _check_feature(
    spec: FeatureSpec, value: Scalar, states: Mapping[str, InstrumentState], source: str
) -> None:
    """A feature is null where its instrument did not run (or where null is allowed), else a fitting value."""
    key = spec.name
    status = states.get(spec.instrument)
    if status is None:
        raise FeatureError(f"{source}: feature {key!r}: no state for instrument {spec.instrument!r}")
    if value is None:
        _check_null(spec, status, source)
        return
    if status.state is not State.RAN:
        raise FeatureError(f"{source}: feature {key!r} has a value but {spec.instrument} did not run")
    _check_value(spec, value, source)


def _check_null(spec: FeatureSpec, status: InstrumentState, source: str) -> None:
    """Refuse a null feature whose instrument ran, unless the feature may be null."""
    if status.state is State.RAN and not spec.nullable:
        raise FeatureError(f"{source}: feature {spec.name!r} is null but {spec.instrument} ran")


def build_record(
    candidate: Candidate,
    language: str,
    x: Mapping[str, Scalar],
    instruments: Mapping[str, InstrumentState],
    *,
    base: str | None = None,
) -> FeatureRecord:
    """A validated record: every feature of an instrument that did not run is set to null here."""
    values = _nulled(x, instruments)
    unknown = sorted(set(x) - set(values))
    if unknown:
        raise FeatureError(f"{candidate.key}: {unknown} are not allow-listed features")
    validate_record(values, instruments, source=candidate.key)
    return FeatureRecord(
        candidate=candidate,
        language=language,
        profile=Profile.STATIC,
        unit=Unit.DELTA if base is not None else Unit.PIN,
        base=base,
        x=values,
        instruments=dict(instruments),
        feature_set_digest=feature_set_digest(),
        schema_version=SCHEMA_VERSION,
    )


def _nulled(x: Mapping[str, Scalar], instruments: Mapping[str, InstrumentState]) -> dict[str, Scalar]:
    """Every feature of the profile, null where its instrument did not run."""
    values: dict[str, Scalar] = {}
    for spec in features_for(Profile.STATIC):
        status = instruments.get(spec.instrument)
        values[spec.name] = x.get(spec.name) if status is not None and status.state is State.RAN else None
    return values

"""The instruments' versions per language: what a shipped record was built with (the file keeps them once)."""

from __future__ import annotations

from ouroboros_gates.decider._scanned import grammar_version
from ouroboros_gates.decider.instruments.bandit_tool import bandit_version
from ouroboros_gates.decider.instruments.delta import DELTA_VERSION
from ouroboros_gates.decider.instruments.roles import roles_version
from ouroboros_gates.decider.instruments.rules import rules_version
from ouroboros_gates.decider.instruments.taint import taint_version, vocabulary_of
from ouroboros_gates.decider.languages import LANGUAGES

__all__ = ["instrument_versions"]


def instrument_versions() -> dict[str, dict[str, str | None]]:
    """Per instrument, per language, the version a record of that language carries."""
    return {
        "bandit": {lang: bandit_version() for lang in LANGUAGES},
        "delta": {lang: DELTA_VERSION for lang in LANGUAGES},
        "facts": {lang: grammar_version() for lang in LANGUAGES},
        "lang": {lang: grammar_version() for lang in LANGUAGES},
        "qr": {lang: rules_version() for lang in LANGUAGES},
        "roles": {lang: roles_version(lang) for lang in LANGUAGES},
        "taint": {
            lang: taint_version(lang) if vocabulary_of(lang) is not None else None for lang in LANGUAGES
        },
    }

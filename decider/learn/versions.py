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
        "bandit": _everywhere(bandit_version()),
        "delta": _everywhere(DELTA_VERSION),
        "facts": _everywhere(grammar_version()),
        "lang": _everywhere(grammar_version()),
        "qr": _everywhere(rules_version()),
        "roles": {lang: roles_version(lang) for lang in LANGUAGES},
        "taint": {lang: _taint_version(lang) for lang in LANGUAGES},
    }


def _everywhere(version: str) -> dict[str, str | None]:
    """One version for every language (an instrument that reads them all alike)."""
    return dict.fromkeys(LANGUAGES, version)


def _taint_version(lang: str) -> str | None:
    """The taint step's version for a language it has a vocabulary for (else None: it does not run)."""
    return taint_version(lang) if vocabulary_of(lang) is not None else None

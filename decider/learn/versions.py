"""The instruments' versions per language: what a shipped record was built with (the file keeps them once)."""

from __future__ import annotations

from collections.abc import Callable

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
        "bandit": _per_language(lambda _lang: bandit_version()),
        "delta": _per_language(lambda _lang: DELTA_VERSION),
        "facts": _per_language(lambda _lang: grammar_version()),
        "lang": _per_language(lambda _lang: grammar_version()),
        "qr": _per_language(lambda _lang: rules_version()),
        "roles": _per_language(roles_version),
        "taint": _per_language(_taint_version),
    }


def _per_language(version: Callable[[str], str | None]) -> dict[str, str | None]:
    """An instrument's version for each language."""
    return {lang: version(lang) for lang in LANGUAGES}


def _taint_version(lang: str) -> str | None:
    """The taint step's version for a language it has a vocabulary for (else None: it does not run)."""
    return taint_version(lang) if vocabulary_of(lang) is not None else None

"""A miner's rules: parsed, held to the contract (``check_rules``) and evaluated with a knee.

``check_rules`` is the first check of every miner test, and the check every mutant meets first:
the text must parse, open with its ``/* predicate */`` block, and pass the engine's contract (safety:
``negation before its variables are bound``, ``unbound variable X in head``; stratification; one
arity per predicate). The engine's errors become ``RulesError`` here and nowhere else, always as
``file:line:col: message``.

Thresholds are read, never written: a rule says ``knee(K), gt(S, K)`` and the caller gives the
engine ``knee(κ)`` as an input fact when a knee is set; with no knee the relation is empty.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from ouroboros_gates.miners.datalog import (
    CheckedProgram,
    ContractError,
    InputFact,
    Model,
    ParseError,
    Program,
    Value,
    check,
    check_defined,
    evaluate,
    parse,
)
from ouroboros_gates.miners.errors import FactsError, RulesError

__all__ = [
    "KNEE",
    "SCORE",
    "Rules",
    "check_program",
    "check_rules",
    "check_sources",
    "derived_predicates",
    "run_rules",
]

KNEE = "knee"
"""The input relation a rule reads its threshold from: ``knee(K)``."""

SCORE = "score"
"""The extracted relation whose values are the knee candidates: ``score(I, S)``, S last."""


@dataclass(frozen=True)
class Rules:
    """A rules text that meets the contract: the parsed program and its checked form."""

    program: Program
    checked: CheckedProgram

    @property
    def doc(self) -> str:
        """The ``/* predicate */`` block's text."""
        return self.program.predicate_doc or ""


def _column(program: Program, line: int | None) -> int:
    """The column of the first clause that starts on ``line`` (1 when none does)."""
    starts = [rule.location for rule in program.rules] + [fact.atom.location for fact in program.facts]
    starts += [declaration.location for declaration in program.declarations]
    columns = [location.column for location in starts if location.line == line]
    return min(columns, default=1)


def check_program(program: Program, require_doc: bool = True) -> Rules:
    """Hold a parsed (or mutated) program to the contract; raises ``RulesError``."""
    if require_doc and not (program.predicate_doc or "").strip():
        raise RulesError(program.file, 1, 1, "rules must open with a /* predicate */ block comment")
    try:
        return Rules(program, check(program))
    except ContractError as exc:
        file, line = exc.file or program.file, exc.line or 1
        raise RulesError(file, line, _column(program, exc.line), exc.message) from exc


def check_rules(source: Path | str, file: str | None = None, require_doc: bool = True) -> Rules:
    """Parse and check a rules file (a path) or text (``file`` names it); raises ``RulesError``."""
    if isinstance(source, Path):
        try:
            text = source.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RulesError(str(source), 1, 1, f"cannot read the rules: {exc}") from exc
        name = file or str(source)
    else:
        text, name = source, file or "<rules>"
    try:
        program = parse(text, name)
    except ParseError as exc:
        raise RulesError(exc.file, exc.line, exc.column, exc.message) from exc
    return check_program(program, require_doc)


def check_sources(rules: Rules, given: Collection[str]) -> None:
    """Every predicate a rule reads is derived, declared, documented in the ``/* predicate */`` block
    or among ``given`` (the input's predicates); raises ``RulesError`` at the first that is none."""
    try:
        check_defined(rules.checked, given)
    except ContractError as exc:
        file, line = exc.file or rules.program.file, exc.line or 1
        raise RulesError(file, line, _column(rules.program, exc.line), exc.message) from exc


def derived_predicates(program: Program) -> tuple[str, ...]:
    """The predicates some rule derives (the non-input ones), in order of first definition."""
    return tuple(dict.fromkeys(rule.head.predicate for rule in program.rules))


def run_rules(
    rules: Rules, facts: Iterable[InputFact], knee: Value | None = None, proofs: bool | Collection[str] = True
) -> Model:
    """Evaluate over ``facts``, with ``knee(knee)`` added as an input fact when a knee is set (without
    ``proofs``: no derivations kept; with predicates, only theirs: ``evaluate``'s)."""
    given: list[InputFact] = list(facts)
    if knee is not None:
        given.append((KNEE, (knee,), None))
    try:
        return evaluate(rules.checked, given, proofs)
    except ContractError as exc:  # an input fact of the wrong arity or type
        raise FactsError(f"{rules.program.file}: the facts do not fit the rules: {exc.message}") from exc

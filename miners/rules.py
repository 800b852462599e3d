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
    Location,
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
    columns = [location.column for location in _clause_starts(program) if location.line == line]
    return min(columns, default=1)


def _clause_starts(program: Program) -> list[Location]:
    """Where each rule, fact and declaration of the program starts."""
    starts = [rule.location for rule in program.rules] + [fact.atom.location for fact in program.facts]
    starts += [declaration.location for declaration in program.declarations]
    return starts


def _rules_error(program: Program, exc: ContractError) -> RulesError:
    """A contract error as a ``RulesError`` at the clause it names (the file's first line when none)."""
    file, line = exc.file or program.file, exc.line or 1
    return RulesError(file, line, _column(program, exc.line), exc.message)


def check_program(program: Program, require_doc: bool = True) -> Rules:
    """Hold a parsed (or mutated) program to the contract; raises ``RulesError``."""
    if require_doc:
        _check_doc(program)
    try:
        return Rules(program, check(program))
    except ContractError as exc:
        raise _rules_error(program, exc) from exc


def _check_doc(program: Program) -> None:
    """``RulesError`` unless the rules open with a ``/* predicate */`` block."""
    if not (program.predicate_doc or "").strip():
        raise RulesError(program.file, 1, 1, "rules must open with a /* predicate */ block comment")


def check_rules(source: Path | str, file: str | None = None, require_doc: bool = True) -> Rules:
    """Parse and check a rules file (a path) or text (``file`` names it); raises ``RulesError``."""
    text, name = _read_rules(source, file) if isinstance(source, Path) else (source, file or "<rules>")
    try:
        program = parse(text, name)
    except ParseError as exc:
        raise RulesError(exc.file, exc.line, exc.column, exc.message) from exc
    return check_program(program, require_doc)


def _read_rules(path: Path, file: str | None) -> tuple[str, str]:
    """A rules file's text and the name it is shown by; ``RulesError`` when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesError(str(path), 1, 1, f"cannot read the rules: {exc}") from exc
    return text, file or str(path)


def check_sources(rules: Rules, given: Collection[str]) -> None:
    """Every predicate a rule reads is derived, declared, documented in the ``/* predicate */`` block
    or among ``given`` (the input's predicates); raises ``RulesError`` at the first that is none."""
    try:
        check_defined(rules.checked, given)
    except ContractError as exc:
        raise _rules_error(rules.program, exc) from exc


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

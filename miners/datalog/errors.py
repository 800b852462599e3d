"""Errors of the Datalog engine.

    DatalogError                 root of every error the engine raises on purpose
    ├── ParseError               the text is not in the dialect (file:line:column: message)
    ├── ContractError            a well-formed program or input the engine refuses to evaluate
    │   ├── UnsafeRuleError      a head, negated or builtin variable no positive atom binds
    │   ├── UnstratifiedError    recursion through negation (names the cycle)
    │   ├── ArityError           one predicate used with two arities (names both places)
    │   ├── DeclarationError     a `.decl` repeated, or a constant of the wrong declared type
    │   ├── FactError            an input fact of the wrong arity or type, or an unsupported value
    │   └── UndefinedPredicateError  a rule reads a predicate nothing defines (no rule, fact or declaration)
    └── UnknownFactError         a proof asked for an atom the model does not hold

Every error is permanent: the same program and facts fail the same way, so nothing retries.
Contract errors carry the file and line of the offending rule or declaration when there is one.
"""

from __future__ import annotations

__all__ = [
    "ArityError",
    "ContractError",
    "DatalogError",
    "DeclarationError",
    "FactError",
    "ParseError",
    "ProofsNotKeptError",
    "UndefinedPredicateError",
    "UnknownFactError",
    "UnsafeRuleError",
    "UnstratifiedError",
]


class DatalogError(Exception):
    """Root of every error the Datalog engine raises on purpose."""


class ParseError(DatalogError):
    """The text is not in the dialect; ``str`` is ``file:line:column: message``."""

    def __init__(self, file: str, line: int, column: int, message: str) -> None:
        super().__init__(f"{file}:{line}:{column}: {message}")
        self.file = file
        self.line = line
        self.column = column
        self.message = message


class ContractError(DatalogError):
    """A well-formed program or input that the engine refuses before evaluating anything."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None) -> None:
        super().__init__(message if file is None else f"{file}:{line}: {message}")
        self.file = file
        self.line = line
        self.message = message


class UnsafeRuleError(ContractError):
    """A variable of the head, of a negated atom or of a builtin is bound by no positive atom."""


class UnstratifiedError(ContractError):
    """A predicate depends on itself through a negation, so the program has no stratification."""


class ArityError(ContractError):
    """One predicate is used (or declared) with two different numbers of arguments."""


class DeclarationError(ContractError):
    """A predicate is declared twice, or a constant contradicts its declared type."""


class FactError(ContractError):
    """An input fact the engine cannot take: wrong arity or declared type, or a value that is not
    a string, an int or a finite float."""


class UndefinedPredicateError(ContractError):
    """A rule reads a predicate that no rule derives and no fact, ``.decl`` or ``/* predicate */``
    block names: a misspelt name, most likely, that would make the rule silently derive nothing."""


class UnknownFactError(DatalogError, LookupError):
    """A proof was asked for an atom that the model does not hold."""


class ProofsNotKeptError(DatalogError):
    """A proof was asked of a model evaluated with ``proofs=False``, which keeps no derivations."""

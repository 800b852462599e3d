"""Errors of the miner contract: the registry, rules, labels, facts and the verbs over them.

    OuroError                          (schemas.errors) root of every error Ouroboros raises on purpose
    └── PermanentError                 (schemas.errors) retrying cannot help
        ├── CorpusError                (schemas.errors) a corpus item cannot be read at all (names the path)
        └── MinerError                 a miner, its files or its inputs are wrong; one line naming the place
            ├── MinerNotFoundError     no discovered miner has that name (lists the known ones)
            ├── MinerDefinitionError   a miner folder breaks the contract (a constant missing or of the
            │                          wrong type, a bad folder name, two miners with one NAME)
            ├── RulesError             rules.dl refused: syntax, safety, stratification, arity, no
            │                          ``/* predicate */`` block (``file:line:col: message``)
            ├── LabelsError            a labels.tsv row is wrong (``file:row: message``)
            ├── FactsError             facts the rules cannot take (a predicate used with two arities)
            └── MinerUsageError        a verb was given an impossible argument (an odd PBO block count,
                                       a labelled instance with no corpus item, a folder that exists)

Every error is permanent: the same files fail the same way. ``ouro`` prints one of them as one line on
stderr and exits 2. The Datalog engine's own errors (``miners.datalog.DatalogError``) are translated to
``RulesError`` in exactly one place, ``miners.rules``.
"""

from __future__ import annotations

from ouroboros_gates.schemas.errors import PermanentError

__all__ = [
    "FactsError",
    "LabelsError",
    "MinerDefinitionError",
    "MinerError",
    "MinerNotFoundError",
    "MinerUsageError",
    "RulesError",
]


class MinerError(PermanentError):
    """A miner, its files or its inputs are wrong; the message names the place."""


class MinerNotFoundError(MinerError):
    """No discovered miner has the name asked for."""


class MinerDefinitionError(MinerError):
    """A miner folder breaks the contract (its ``extract.py`` constants, its name, its files)."""


class RulesError(MinerError):
    """A rules file the contract refuses; ``str`` is ``file:line:col: message``."""

    def __init__(self, file: str, line: int, column: int, message: str) -> None:
        super().__init__(f"{file}:{line}:{column}: {message}")
        self.file = file
        self.line = line
        self.column = column
        self.message = message


class LabelsError(MinerError):
    """A labels file row that cannot be read; ``str`` is ``file:row: message``."""

    def __init__(self, file: str, row: int, message: str) -> None:
        super().__init__(f"{file}:{row}: {message}")
        self.file = file
        self.row = row
        self.message = message


class FactsError(MinerError):
    """Extracted or given facts the rules cannot take: a wrong arity or declared type."""


class MinerUsageError(MinerError):
    """A verb was given an argument it cannot work with."""

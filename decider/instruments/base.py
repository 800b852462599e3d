"""What every instrument hands back: signals, and its state and version per file."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from ouroboros_gates.schemas import InstrumentState, State

__all__ = ["RULESET", "Signal", "digest_files", "ran", "state"]

RULESET = Path(str(files("ouroboros_gates.ruleset")))
"""The packaged ruleset folder: quick rules, semantic vocabularies, families, frameworks."""


@dataclass(frozen=True)
class Signal:
    """One instrument's observation at a line: which rule, which family, which closed mechanisms."""

    instrument: str
    rule: str
    family: str
    line: int
    message: str
    mechanisms: tuple[str, ...] = ()
    precision_estimate: float | None = None


def digest_files(paths: list[Path], *extra: str) -> str:
    """sha256 over the files' names and bytes (sorted) and any extra version strings."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for part in extra:
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def state(value: State, version: str | None) -> InstrumentState:
    """An instrument state with its version."""
    return InstrumentState(state=value, version=version)


def ran(version: str | None) -> InstrumentState:
    """The state of an instrument that read its input and produced its features."""
    return InstrumentState(state=State.RAN, version=version)

"""What the learning commands keep in the decider's store (beside the event log, at its URL): the examples
of a memory they built (``ouro learn memory build``) and the program they adopted (``ouro learn adopt``);
deployment reads both from there."""

from __future__ import annotations

from ouroboros_gates.decider.memory import Memory, MemoryStore
from ouroboros_gates.decider.program import Program
from ouroboros_gates.events import ensure_schema, make_engine

__all__ = ["keep_adopted", "keep_examples"]


def _store(url: str) -> MemoryStore:
    engine = make_engine(url)
    ensure_schema(engine)
    return MemoryStore(engine)


def keep_examples(url: str, memory: Memory) -> int:
    """The memory's examples in the store at ``url``; how many were new."""
    return _store(url).save(memory)


def keep_adopted(url: str, program: Program) -> None:
    """The program in the store at ``url``, adopted for its profile."""
    _store(url).put_program(program.to_json(), program.program_id, program.profile, adopt=True)

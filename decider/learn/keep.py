"""What the learning commands keep in the decider's memory tables (side tables beside the event log): the
examples of a memory they built (``ouro learn memory build``) and the program they adopted (``ouro learn
adopt``); deployment reads both from there."""

from __future__ import annotations

from ouroboros_gates.decider.memory import Memory, MemoryStore
from ouroboros_gates.decider.program import Program
from ouroboros_gates.events import SideTables

__all__ = ["keep_adopted", "keep_examples"]


def keep_examples(side: SideTables, memory: Memory) -> int:
    """The memory's examples in the decider's tables of ``side``; how many were new."""
    return MemoryStore(side).save(memory)


def keep_adopted(side: SideTables, program: Program) -> None:
    """The program in the decider's tables of ``side``, adopted for its profile."""
    MemoryStore(side).put_program(program.to_json(), program.program_id, program.profile, adopt=True)

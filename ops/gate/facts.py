"""Each gate's facts about one session, at the cost of the lines appended since the last decision.

A **local** gate (its miner declares ``LOCAL``: each fact comes from one event read alone, which the
miner test checks) keeps the session's facts line by line: every line the log reads is extracted once,
alone, and its facts kept with their line number; its events are then dropped. So a decision on the
50,000th call costs what it did on the first (the facts of a gate are its matches, a few per thousand
calls, not the session's events). Any other gate reads the session's log afresh up to the line a
decision asks about and extracts the whole run: its cost grows with the session (a warn gate pays it in
a forked child, off the request path, whose memory goes with it; a deny gate that is not local pays it on
every call, in the server).

Each line's facts for a local gate are extracted within ``LINE_BUDGET_S`` (``ops.gate.budget``): a line that
takes longer (a pattern that backtracks without end, a gate's code that loops) is left out for that gate,
once and for all, and named: a decision on that very line cannot judge the call with that gate
(``skipped``), and every other decision goes on with the line's facts missing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from ouroboros_gates.miners.datalog import InputFact
from ouroboros_gates.ops.gate.budget import OverBudget, budget
from ouroboros_gates.ops.gate.evaluate import LoadedGate, events_facts
from ouroboros_gates.ops.gate.session import Line, SessionLog, read_events
from ouroboros_gates.schemas import HarnessEvent

__all__ = ["LINE_BUDGET_S", "DecisionFacts", "SessionFacts"]

LINE_BUDGET_S = 0.5
"""The longest one line's facts may take for one local gate (a line takes well under a millisecond)."""

log = logging.getLogger("ouroboros_gates.ops.gate")

GateKey = tuple[str, str]
"""A gate's name and the digest of the files it was accepted with."""


def _key(gate: LoadedGate) -> GateKey:
    return gate.entry.name, gate.entry.digest


class SessionFacts:
    """The facts of a session's local gates, kept line by line (see the module docstring)."""

    def __init__(self, log: SessionLog) -> None:
        self.log = log
        self._kept: dict[GateKey, list[tuple[int, InputFact]]] = {}
        self._skipped: dict[GateKey, set[int]] = {}
        self._generation = log.generation

    def add(self, gates: Sequence[LoadedGate], lines: list[Line]) -> None:
        """Extract the lines the log just read for every local gate; a gate not kept yet starts from the
        whole log, and a gate no longer bound is forgotten."""
        if self._generation != self.log.generation:  # the log was replaced: its old facts mean nothing
            self._forget_all()
        local = {_key(gate): gate for gate in gates if gate.miner.local}
        self._forget_unbound(local)
        for key, gate in local.items():
            self._keep(key, gate, lines)

    def _forget_all(self) -> None:
        """Drop every gate's facts and skipped lines, for the log's new generation."""
        self._kept.clear()
        self._skipped.clear()
        self._generation = self.log.generation

    def _forget_unbound(self, local: dict[GateKey, LoadedGate]) -> None:
        """Drop the facts of the gates no longer bound."""
        for key in [k for k in self._kept if k not in local]:
            del self._kept[key]

    def _keep(self, key: GateKey, gate: LoadedGate, lines: list[Line]) -> None:
        """Add the facts of ``lines`` to one local gate's."""
        kept = self._kept.get(key)
        if kept is None and not lines:
            return  # nothing read: a decision that asks for the gate builds its facts from the log
        try:
            if kept is not None:
                kept.extend(self._bounded(gate, lines))
            else:  # from these lines when they start the log, else from the whole log, once
                self._kept[key] = self._bounded(gate, lines if lines[0][0] == 1 else self._all_lines())
        except Exception:  # the gate's own code failed: a decision that asks for it names it
            self._kept.pop(key, None)

    def skipped(self, gate: LoadedGate, line: int) -> bool:
        """Whether line ``line``'s facts for ``gate`` were left out, over its budget."""
        return line in self._skipped.get(_key(gate), ())

    def _bounded(self, gate: LoadedGate, lines: list[Line]) -> list[tuple[int, InputFact]]:
        """The facts of ``lines``, each line's within ``LINE_BUDGET_S`` (over it: left out, and named)."""
        found: list[tuple[int, InputFact]] = []
        for number, event in lines:
            mine = False
            try:
                with budget(LINE_BUDGET_S) as mine:
                    facts = events_facts(gate, self.log.run, self.log.path, [event])
            except OverBudget:
                if not mine:
                    raise
                self._skipped.setdefault(_key(gate), set()).add(number)
                log.warning(
                    "gate %s: %s:%d took over %.1fs: left out",
                    gate.entry.name,
                    self.log.path,
                    number,
                    LINE_BUDGET_S,
                )
                continue
            found += [(number, fact) for fact in facts]
        return found

    def _all_lines(self) -> list[Line]:
        return [(e.span.line, e) for e in read_events(self.log.path, self.log.run, self.log.read_to)]

    def _extract(self, gate: LoadedGate, lines: list[Line]) -> list[tuple[int, InputFact]]:
        run, path = self.log.run, self.log.path
        return [(number, fact) for number, event in lines for fact in events_facts(gate, run, path, [event])]

    def local(self, gate: LoadedGate, upto: int) -> list[InputFact]:
        """A local gate's facts from the lines up to and including line ``upto``; a gate whose facts
        could not be kept is extracted again, to raise what its extractor raises."""
        kept = self._kept.get(_key(gate))
        if kept is None:
            kept = self._extract(gate, self._all_lines())
        return [fact for number, fact in kept if number <= upto]


@dataclass
class DecisionFacts:
    """The facts one decision reads: a local gate's from the session's kept facts, any other gate's from
    the log read afresh up to the byte where the line asked about ends (``ends``: those of the lines a
    decision asks about, known when it is made), once per line, shared by the gates of the decision."""

    session: SessionFacts
    ends: dict[int, int]
    read: dict[int, list[HarnessEvent]] = field(default_factory=dict)

    def facts(self, gate: LoadedGate, upto: int) -> Sequence[InputFact]:
        """The gate's input facts from the lines up to and including line ``upto``."""
        if gate.miner.local:
            return self.session.local(gate, upto)
        log = self.session.log
        if upto not in self.read:
            self.read[upto] = read_events(log.path, log.run, self.ends[upto])
        return events_facts(gate, log.run, log.path, self.read[upto])

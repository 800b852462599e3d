"""Which gates fire on a pending tool call: the pure core of the gate server (no sockets, no files).

Every gate is evaluated on the run so far plus the pending call (its facts over those lines, its rules
at the fitted κ*): where the facts come from (kept line by line for a local miner, extracted from the
log read afresh for any other) is the caller's ``FactSource``. A verdict fires when it is new:

- a **deny** gate fires when a verdict holds with the pending call and not on the run so far (the
  lines before the call's own, whatever order the calls' decisions are asked in: parallel tool calls
  append their lines in one order and may reach the server in another). A verdict that a decision on
  an earlier line had already seen is not new; an unseen one whose proof rests on the pending call's
  line is; any other unseen one is checked against an evaluation of the run so far. So a call that
  changes nothing costs one evaluation per gate, and a verdict that already held (an earlier offense,
  even one denied and recorded) never refuses an innocent call.
- a **warn** gate's verdict is about the run, not the call: each one is told once per session, the
  first time a decision sees it (a late draft pull request is context for the agent, never a reason
  to refuse ``ls``).

A fired verdict is a ``schemas.Finding`` whose proof lists the facts it rests on, each with its
file:line in the session log; the deny reason and the warn context cite them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ouroboros_gates.miners import Miner, Rules, extract_facts, proof_facts, run_rules, to_arg
from ouroboros_gates.miners.corpus import JSONL, EventsItem
from ouroboros_gates.miners.datalog import InputFact, Model, Value
from ouroboros_gates.ops.gate.cache import GateEntry
from ouroboros_gates.schemas import Arg, Fact, Finding, HarnessEvent, Number, Span

__all__ = [
    "Atom",
    "FactSource",
    "Fired",
    "LoadedGate",
    "PendingCall",
    "SessionMemory",
    "evaluate",
    "events_facts",
    "new_findings",
    "render",
]

Atom = tuple[str, tuple[Value, ...]]
MAX_PROOF_LINES = 12


@dataclass(frozen=True)
class LoadedGate:
    """A gate ready to run: its cache entry, its loaded miner and its checked rules."""

    entry: GateEntry
    miner: Miner
    rules: Rules

    @property
    def knee(self) -> Value | None:
        return self.entry.knee


@dataclass
class SessionMemory:
    """What one session's decisions have seen: each deny gate's verdicts on the latest line it decided
    (the line, the verdicts), and each warn gate's verdicts told."""

    last: dict[str, tuple[int, frozenset[Atom]]] = field(default_factory=dict)
    told: dict[str, set[Atom]] = field(default_factory=dict)


@dataclass(frozen=True)
class Fired:
    """A gate's new verdict, as a finding with its proof."""

    gate: LoadedGate
    finding: Finding


class FactSource(Protocol):
    """Where a decision gets a gate's input facts: those of the session's lines up to a line."""

    def facts(self, gate: LoadedGate, upto: int) -> Sequence[InputFact]:
        """The gate's input facts from the lines up to and including line ``upto``."""
        ...


@dataclass(frozen=True)
class PendingCall:
    """A decision's input: where the session's facts come from, and the pending call's line."""

    source: FactSource
    line: Span


def events_facts(gate: LoadedGate, instance: str, path: Path, events: list[HarnessEvent]) -> list[InputFact]:
    """The gate's input facts over some of a session log's events (the whole run so far, or for a local
    gate one line's), through ``extract_facts`` as every verb runs a miner."""
    return extract_facts(
        gate.miner, [EventsItem(JSONL, instance, path.parent, (path,), events)]
    ).input_facts()


def evaluate(gate: LoadedGate, facts: Sequence[InputFact]) -> tuple[Model, frozenset[Atom]]:
    """The gate's model over some input facts, and its verdict atoms."""
    model = run_rules(gate.rules, facts, gate.knee)
    atoms = frozenset((predicate, row) for predicate in gate.miner.verdicts for row in model.facts(predicate))
    return model, atoms


def _finding(gate: LoadedGate, model: Model, atom: Atom) -> Finding:
    predicate, args = atom
    return Finding(
        miner=gate.miner.name,
        rule=predicate,
        subject=tuple(map(to_arg, args)),
        severity=gate.miner.severity,
        proof=proof_facts(model.proof(predicate, args)),
        scope=gate.miner.scope,
    )


def _order(atom: Atom) -> tuple[str, tuple[tuple[bool, str], ...]]:
    return atom[0], tuple((isinstance(value, str), str(value)) for value in atom[1])


def new_findings(gate: LoadedGate, memory: SessionMemory, call: PendingCall) -> list[Fired]:
    """The gate's verdicts that are new with the pending call (deny) or not yet told (warn)."""
    model, atoms = evaluate(gate, call.source.facts(gate, call.line.line))
    if gate.entry.gate != "deny":
        return _untold(gate, memory, model, atoms)
    return _new_with_call(gate, memory, call, model, atoms)


def _untold(gate: LoadedGate, memory: SessionMemory, model: Model, atoms: frozenset[Atom]) -> list[Fired]:
    """A warn gate's verdicts this session has not been told yet (from now on, told)."""
    told = memory.told.setdefault(gate.entry.name, set())
    found = [Fired(gate, _finding(gate, model, atom)) for atom in sorted(atoms - told, key=_order)]
    told |= atoms
    return found


def _seen_before(last: tuple[int, frozenset[Atom]] | None, line: int) -> frozenset[Atom] | None:
    """The verdicts the run so far alone is known to hold: only a decision on an earlier line saw it
    alone; a later line's has seen this call too."""
    return last[1] if last is not None and last[0] < line else None


def _new_with_call(
    gate: LoadedGate, memory: SessionMemory, call: PendingCall, model: Model, atoms: frozenset[Atom]
) -> list[Fired]:
    """A deny gate's verdicts that hold with the pending call and not on the run so far."""
    name, line = gate.entry.name, call.line.line
    last = memory.last.get(name)
    seen = _seen_before(last, line)
    fired = [
        (atom, _finding(gate, model, atom)) for atom in sorted(atoms - (seen or frozenset()), key=_order)
    ]
    doubtful = _doubtful(fired, seen, call.line)
    before = evaluate(gate, call.source.facts(gate, line - 1))[1] if doubtful else frozenset()
    if last is None or last[0] <= line:  # written last: a decision cut short leaves the memory as it was
        memory.last[name] = (line, atoms)
    return [Fired(gate, finding) for atom, finding in fired if atom not in doubtful or atom not in before]


def _doubtful(fired: list[tuple[Atom, Finding]], seen: frozenset[Atom] | None, line: Span) -> set[Atom]:
    """The unseen verdicts to check against the run so far (a second evaluation, only then): a verdict
    whose proof rests on the pending call's line is new with it; any other the previous decision had not
    seen may have held before."""
    return {atom for atom, f in fired if seen is None or line not in {fact.span for fact in f.proof}}


def _arg(arg: Arg) -> str:
    if isinstance(arg, Number):
        number = arg.number
        return str(int(number)) if number.is_integer() else repr(number)
    return json.dumps(arg.text, ensure_ascii=False)


def _fact(fact: Fact) -> str:
    # Facts read from the run and facts written in rules.dl carry their span; the one input without a
    # span is the knee the gate binds at.
    where = f" at {fact.span.file}:{fact.span.line}" if fact.span else " (the κ* its backtest fitted)"
    return f"{fact.predicate}({', '.join(map(_arg, fact.args))}){where}"


def _why(rules: Rules, limit: int = 400) -> str:
    words = rules.doc.split()
    text = " ".join(words[1:] if words[:1] == ["predicate"] else words)
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def render(fired: Fired) -> str:
    """One fired verdict for the agent: the gate, the verdict, what the rule means, and the proof."""
    gate, finding = fired.gate, fired.finding
    head = "refuses this call" if gate.entry.gate == "deny" else "warns"
    verdict = f"{finding.rule}({', '.join(map(_arg, finding.subject))})"
    lines = [f"Ouroboros gate {gate.miner.name} ({gate.entry.gate}, {finding.severity}) {head}: {verdict}."]
    lines.append(f"Rule: {_why(gate.rules)}")
    lines.append("Proof:")
    lines += [f"  {_fact(fact)}" for fact in finding.proof[:MAX_PROOF_LINES]]
    if len(finding.proof) > MAX_PROOF_LINES:
        lines.append(f"  … and {len(finding.proof) - MAX_PROOF_LINES} more fact(s)")
    return "\n".join(lines)

"""From corpus items to verdicts: extract the facts once, evaluate the rules at a knee, and tell which
instances each verdict belongs to.

A verdict belongs to the instances its subject names (a ``Text`` argument equal to an instance id);
a verdict whose subject names none belongs to the instances its proof's facts were read from (by the
file of each leaf's span). Facts should therefore name their instance, as ``gated(R)`` and
``score(R, S)`` do: the engine keeps one span for a fact two items both emit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ouroboros_gates.miners.corpus import CorpusItem
from ouroboros_gates.miners.datalog import GroundAtom, InputFact, Model, Value
from ouroboros_gates.miners.errors import MinerDefinitionError, MinerUsageError
from ouroboros_gates.miners.facts import engine_value, input_fact, proof_facts, to_arg
from ouroboros_gates.miners.registry import Miner
from ouroboros_gates.miners.rules import SCORE, Rules, run_rules
from ouroboros_gates.schemas import Fact, Finding, Text

__all__ = ["Extracted", "Verdicts", "extract_facts", "find", "judge"]


@dataclass(frozen=True)
class Extracted:
    """What a miner's extractor made of some corpus items: their facts, by instance, in item order."""

    facts: Mapping[str, tuple[Fact, ...]]
    owners: Mapping[str, str]

    @property
    def instances(self) -> tuple[str, ...]:
        return tuple(self.facts)

    def input_facts(self) -> list[InputFact]:
        """Every fact as the engine's input, item by item."""
        return [input_fact(fact) for facts in self.facts.values() for fact in facts]

    def scores(self, instances: Iterable[str]) -> tuple[Value, ...]:
        """The distinct measured ``score`` values (the last argument) of ``instances``, ascending:
        the knee candidates K."""
        found: set[Value] = set()
        for instance in instances:
            for fact in self.facts.get(instance, ()):
                if _is_measured_score(fact):
                    found.add(engine_value(fact.args[-1]))
        return tuple(sorted(found))


def _is_measured_score(fact: Fact) -> bool:
    """Whether a fact is a ``score`` fact whose last argument is a number."""
    return fact.predicate == SCORE and bool(fact.args) and not isinstance(fact.args[-1], Text)


def _facts_of(miner: Miner, item: CorpusItem) -> tuple[Fact, ...]:
    try:
        facts = tuple(miner.extract(item))
    except Exception as exc:  # the miner's own code failed on this item
        raise MinerDefinitionError(
            f"{miner.name}: extract failed on {item.path}: {type(exc).__name__}: {exc}"
        ) from exc
    strays = [fact for fact in facts if not isinstance(fact, Fact)]
    if strays:
        raise MinerDefinitionError(
            f"{miner.name}: extract yielded {strays[0]!r} for {item.path}, not a schemas.Fact"
        )
    return facts


def extract_facts(miner: Miner, items: Sequence[CorpusItem]) -> Extracted:
    """Run ``miner.extract`` once per item. Two items with one instance id are refused."""
    facts: dict[str, tuple[Fact, ...]] = {}
    owners: dict[str, str] = {}
    for item in items:
        if item.kind not in miner.corpus:
            raise MinerUsageError(
                f"{item.path}: a {item.kind} item; {miner.name} reads {', '.join(miner.corpus)}"
            )
        if item.instance in facts:
            raise MinerUsageError(f"{item.path}: instance {item.instance} is named by two corpus items")
        facts[item.instance] = _facts_of(miner, item)
        owners.update(dict.fromkeys(item.file_names, item.instance))
    return Extracted(facts, owners)


@dataclass(frozen=True)
class Verdicts:
    """The verdicts derived at one knee: every verdict atom, and the instances that have one."""

    atoms: frozenset[GroundAtom]
    flagged: frozenset[str]


def _owners(model: Model, atom: GroundAtom, extracted: Extracted) -> set[str]:
    """The instances a verdict is about: those it names, else those its proof's facts come from."""
    return _named_instances(atom, extracted) or _proof_instances(model, atom, extracted)


def _named_instances(atom: GroundAtom, extracted: Extracted) -> set[str]:
    return {value for value in atom.args if isinstance(value, str) and value in extracted.facts}


def _proof_instances(model: Model, atom: GroundAtom, extracted: Extracted) -> set[str]:
    """The instances whose files hold the facts of the verdict's proof."""
    leaves = proof_facts(model.proof(atom.predicate, atom.args))
    return {
        extracted.owners[leaf.span.file]
        for leaf in leaves
        if leaf.span and leaf.span.file in extracted.owners
    }


def _order(row: tuple[Value, ...]) -> tuple[tuple[bool, Value], ...]:
    """Numbers before strings, each in its own order."""
    return tuple((isinstance(value, str), value) for value in row)


def verdict_atoms(model: Model, verdicts: Sequence[str]) -> list[GroundAtom]:
    """The model's verdict atoms, verdict by verdict, each sorted by its arguments."""
    return [
        GroundAtom(predicate, args)
        for predicate in verdicts
        for args in sorted(model.facts(predicate), key=_order)
    ]


def judge(rules: Rules, verdicts: Sequence[str], extracted: Extracted, knee: Value | None) -> Verdicts:
    """The verdicts of ``rules`` over the extracted facts at ``knee`` (no knee: an empty relation)."""
    model = run_rules(rules, extracted.input_facts(), knee)
    atoms = verdict_atoms(model, verdicts)
    flagged: set[str] = set()
    for atom in atoms:
        flagged |= _owners(model, atom, extracted)
    return Verdicts(frozenset(atoms), frozenset(flagged))


def find(miner: Miner, rules: Rules, extracted: Extracted, knee: Value | None) -> list[Finding]:
    """The findings at ``knee``: one per verdict atom, with the proof's leaves as its evidence."""
    model = run_rules(rules, extracted.input_facts(), knee)
    return [
        Finding(
            miner=miner.name,
            rule=atom.predicate,
            subject=tuple(map(to_arg, atom.args)),
            severity=miner.severity,
            proof=proof_facts(model.proof(atom.predicate, atom.args)),
            scope=miner.scope,
        )
        for atom in verdict_atoms(model, miner.verdicts)
    ]

"""Mine one run with every accepted miner: the findings it gives that the log does not hold yet.

Pure: a run's files and the gates in, findings out. Which versions are gates is what the event log's verdicts
say (``verdicts.fleet_gates``); judging a version is ``miner.accept``'s step (``accept``), never this one's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ouroboros_gates.events import StoredEvent
from ouroboros_gates.miners import CorpusItem, Miner, Rules, extract_facts, find
from ouroboros_gates.miners.datalog import Value
from ouroboros_gates.schemas import Finding, FindingDerived, MinerAccepted
from ouroboros_gates.workers.miner.catalogue import MinerVersion

__all__ = ["Gate", "finding_key", "findings_stream", "mine_run", "new_findings"]


@dataclass(frozen=True)
class Gate:
    """An accepted miner with its fitted knee, ready to mine."""

    miner: Miner
    knee: Value | None
    digest: str
    accepted: MinerAccepted
    rules: Rules

    @classmethod
    def of(cls, version: MinerVersion, accepted: MinerAccepted, rules: Rules) -> Gate:
        """The gate an accepted version makes: it mines with the knee it was accepted on."""
        return cls(version.miner, accepted.acceptance.backtest.kappa_star, version.digest, accepted, rules)


def findings_stream(run: str) -> str:
    """The stream of one run's findings."""
    return f"findings/{run}"


def finding_key(finding: Finding, run: str) -> tuple[str, str, str, str]:
    """Findings are deduplicated by (miner, rule, subject, run)."""
    subject = "|".join(arg.model_dump_json() for arg in finding.subject)
    return (finding.miner, finding.rule, subject, run)


def mine_run(item: CorpusItem, gates: Iterable[Gate]) -> list[Finding]:
    """Every finding of every gate on one run (read once for all of them)."""
    found: list[Finding] = []
    gates = list(gates)
    shared = item.read_once() if len(gates) > 1 else item
    for gate in gates:
        extracted = extract_facts(gate.miner, [shared])
        found.extend(find(gate.miner, gate.rules, extracted, gate.knee))
    return found


def new_findings(
    item: CorpusItem, gates: Iterable[Gate], recorded: Iterable[StoredEvent]
) -> list[FindingDerived]:
    """The findings of ``gates`` on the run ``item`` that its ``recorded`` findings stream does not hold."""
    seen = {finding_key(event.decode_as(FindingDerived).finding, item.instance) for event in recorded}
    found = (finding for finding in mine_run(item, gates) if finding_key(finding, item.instance) not in seen)
    return [FindingDerived(run=item.instance, finding=finding) for finding in found]

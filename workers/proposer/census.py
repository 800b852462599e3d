"""The census: can a proposal reach TP > 0 on its own named instances with an extractor that exists?

The extractor is the registered miner the proposal names, else the template's (draft-pr-late). Its
instances are the named runs that exist (only ``jsonl`` items are read today); its positives are those
labelled ``+`` (every named instance when it labels none). TP > 0 when, at no knee or at any of the measured
knee candidates, the miner's rules flag a positive. The first mining run's census: 0 of 110 with the
template, because each proposal needs its own extractor (docs/loop.md, "First mining run").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ouroboros_gates.harness import run_at
from ouroboros_gates.miners import CorpusItem, Miner, MinerError, extract_facts, judge
from ouroboros_gates.miners.corpus import JSONL
from ouroboros_gates.schemas import Proposal

__all__ = ["TEMPLATE", "CensusRow", "census_row", "count"]

TEMPLATE = "draft-pr-late"
"""The template miner's name: the extractor a proposal without a registered miner is measured with."""


@dataclass(frozen=True)
class CensusRow:
    """One proposal measured against the contract."""

    ticket: int
    miner: str
    extractor: str
    instances: int
    tp: int
    why: str

    @property
    def reaches(self) -> bool:
        """Whether the extractor reaches TP > 0."""
        return self.tp > 0


def census_row(
    proposal: Proposal, miners: Mapping[str, Miner], run_file: Callable[[str], Path | None]
) -> CensusRow:
    """Measure ``proposal``: ``miners`` by name, ``run_file`` the events file of a run id (None if none)."""
    miner = miners.get(proposal.miner) or miners.get(TEMPLATE)
    if miner is None:
        return CensusRow(proposal.ticket, proposal.miner, "-", 0, 0, "no registered miner and no template")
    items = _items(proposal, run_file)
    if not items:
        return CensusRow(
            proposal.ticket, proposal.miner, miner.name, 0, 0, "no named instance is a run it can read"
        )
    positives = _positives(proposal, items)
    if not positives:
        return CensusRow(proposal.ticket, proposal.miner, miner.name, len(items), 0, "no positive among them")
    return _extractor_row(proposal, miner, items, positives)


def _extractor_row(
    proposal: Proposal, miner: Miner, items: Sequence[CorpusItem], positives: set[str]
) -> CensusRow:
    """The row of the extractor run on the items: the most positives it flags at any knee, or why it
    failed."""
    try:
        best = _best_tp(miner, items, positives)
    except MinerError as exc:
        return CensusRow(
            proposal.ticket, proposal.miner, miner.name, len(items), 0, f"the extractor failed: {exc}"
        )
    why = f"{best} of {len(positives)} positive(s) flagged" if best else "flags no positive at any knee"
    return CensusRow(proposal.ticket, proposal.miner, miner.name, len(items), best, why)


def _items(proposal: Proposal, run_file: Callable[[str], Path | None]) -> list[CorpusItem]:
    """The proposal's instances that are runs the miner can read, as corpus items."""
    return [
        CorpusItem(JSONL, name, path, run_at(path).files)
        for name in proposal.instances
        if (path := run_file(name)) is not None
    ]


def _positives(proposal: Proposal, items: Sequence[CorpusItem]) -> set[str]:
    """The items labelled positive (every item when the proposal labels none)."""
    signs = dict(label.rsplit("\t", 1) for label in proposal.labels)
    return {i.instance for i in items if signs.get(i.instance, "+" if not signs else "-") == "+"}


def _best_tp(miner: Miner, items: Sequence[CorpusItem], positives: set[str]) -> int:
    """The most positives the miner's rules flag at any knee (``MinerError`` when its extractor fails)."""
    extracted = extract_facts(miner, items)
    rules = miner.rules()
    return max(
        len(judge(rules, miner.verdicts, extracted, knee).flagged & positives)
        for knee in (None, *extracted.scores(extracted.instances))
    )


def count(rows: Sequence[CensusRow]) -> int:
    """How many proposals reach TP > 0."""
    return sum(1 for row in rows if row.reaches)

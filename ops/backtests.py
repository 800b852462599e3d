"""A miner's backtest on the ledger as it stood at a time: the labels and runs the event log had recorded by
then (``events.recorded``), judged by the miner's walk-forward backtest. ``ouro miner NAME backtest ledger``
prints it; the API's replay action records it as a ``BacktestReplayed`` event.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from ouroboros_gates.events import LedgerStore
from ouroboros_gates.events.recorded import RecordedLabel, recorded_labels, recorded_runs
from ouroboros_gates.miners import (
    DEFAULT_BLOCKS,
    CorpusItem,
    Labels,
    MinerUsageError,
    backtest,
    corpus_items,
    extract_facts,
    find_miner,
)
from ouroboros_gates.schemas import BacktestReplayed, LabelRow
from ouroboros_gates.schemas.errors import OuroError

__all__ = ["LedgerLabels", "ledger_labels", "replay_backtest"]


@dataclass(frozen=True)
class LedgerLabels:
    """The labels the log held for a miner by then, the runs to judge, and the labels left out (and why)."""

    labels: Labels
    items: list[CorpusItem]
    left_out: list[str]


def ledger_labels(
    store: LedgerStore, miner: str, as_of: datetime | None, items: Sequence[str] | None = None
) -> LedgerLabels:
    """The labels recorded for ``miner`` by ``as_of`` and the runs named (or, with none, recorded by then).

    Raises ``MinerUsageError`` when no label stands (none recorded, or none on a run with a start time)."""
    runs = recorded_runs(store, as_of)
    found = corpus_items(items) if items else corpus_items(run.path for run in runs)
    starts = {run.run: run.started for run in runs}
    rows, lines, left_out = _label_rows(recorded_labels(store, miner, as_of), starts)
    if not rows:
        when = f" by {as_of.isoformat()}" if as_of else ""
        raise MinerUsageError(f"ledger: no labels recorded for {miner}{when}")
    return LedgerLabels(Labels("ledger", tuple(rows), tuple(lines)), found, left_out)


def _label_rows(
    recorded: Iterable[RecordedLabel], starts: Mapping[str, datetime | None]
) -> tuple[list[LabelRow], list[int], list[str]]:
    """The recorded labels as label rows, with each one's number; a label whose run has no start time is
    left out, with a note."""
    rows, lines, left_out = [], [], []
    for number, label in enumerate(recorded, start=1):
        start = starts.get(label.instance)
        if start is None:
            left_out.append(f"ledger: {label.instance}: no recorded run with a start time; label left out")
            continue
        row = LabelRow(
            instance=label.instance,
            positive=label.positive,
            start=start,
            flagged=label.flagged,
            source=label.source,
        )
        rows.append(row)
        lines.append(number)
    return rows, lines, left_out


def replay_backtest(store: LedgerStore, miner_name: str, as_of: datetime, now: datetime) -> BacktestReplayed:
    """The miner's backtest on the log as of ``as_of``, as the event that records it: its result, or the
    one-line reason it could not run (no labels by then, a miner whose rules are refused, a run gone)."""
    miner = find_miner(miner_name)  # an unknown name is the caller's error, not a replay to record
    labels, runs = 0, 0
    try:
        judged = ledger_labels(store, miner.name, as_of)
        labels, runs = len(judged.labels.rows), len(judged.items)
        extracted = extract_facts(miner, judged.items)
        result = backtest(miner.name, miner.rules(), miner.verdicts, judged.labels, extracted, DEFAULT_BLOCKS)
    except OuroError as exc:
        return BacktestReplayed(
            miner=miner.name, as_of=as_of, labels=labels, runs=runs, error=str(exc), at=now
        )
    return BacktestReplayed(
        miner=miner.name, as_of=as_of, labels=labels, runs=runs, backtest=result.record(), at=now
    )

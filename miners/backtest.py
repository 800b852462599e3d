"""The walk-forward backtest (Bergmeir and Benítez 2012), as the worked example runs it (docs/loop.md,
"Worked example").

Labels are ordered by start and split at t, the start of label ⌈n/2⌉ (1-based): labels starting at or
before t fit, the rest are judged. The knee candidates K are the measured ``score`` values of every
labelled instance; κ* is ``argmax precision on the fit half s.t. FN = 0``, ties to the smallest
(``knee.best_knee``), or None when no candidate misses nothing or K is empty (a rule without a knee:
the backtest still judges, with the knee relation empty). The judged half is then counted at κ*:
TP, FP and FN with their instance ids, and the lead time t_flag - (t_start + κ*) of each true positive
the operator flagged. ``families`` = |K| makes the multiple testing visible, and the PBO guard
(``pbo``) is reported with every backtest.

One ``BacktestResult`` holds it all; the markdown block (``markdown``) and the JSON record
(``record``, a ``schemas.Backtest``) are both rendered from it, so they cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ouroboros_gates.miners.datalog import Value
from ouroboros_gates.miners.errors import MinerUsageError
from ouroboros_gates.miners.findings import Extracted, Verdicts, judge
from ouroboros_gates.miners.knee import Confusion, best_knee, confusion
from ouroboros_gates.miners.labels import Labels, format_time
from ouroboros_gates.miners.pbo import DEFAULT_BLOCKS, Pbo, pbo
from ouroboros_gates.miners.rules import Rules
from ouroboros_gates.schemas import Backtest, LabelRow

__all__ = ["BacktestResult", "backtest", "number", "split"]

_KAPPA = r"$\kappa^\star$"
_FIT = r"$\Lambda_{\le t}$"


def number(value: Value | float) -> str:
    """A number as the block shows it: ``468``, ``304``, ``12.5``."""
    if isinstance(value, str):
        return value
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def split(labels: Sequence[LabelRow]) -> tuple[datetime, tuple[LabelRow, ...], tuple[LabelRow, ...]]:
    """``(t, fit, judged)`` for labels ordered by start: t is the start of label ⌈n/2⌉ (1-based)."""
    if not labels:
        raise MinerUsageError("no labels: the backtest needs at least one labelled instance")
    t = labels[math.ceil(len(labels) / 2) - 1].start
    return t, *_halves(labels, t)


def _halves(labels: Sequence[LabelRow], t: datetime) -> tuple[tuple[LabelRow, ...], tuple[LabelRow, ...]]:
    """The labels starting by ``t`` (the fit half) and those after it (the judged half), in order."""
    fit: list[LabelRow] = []
    judged: list[LabelRow] = []
    for row in labels:
        (fit if row.start <= t else judged).append(row)
    return tuple(fit), tuple(judged)


@dataclass(frozen=True)
class BacktestResult:
    """One backtest: the split, the candidates, κ*, the judged counts, lead times, PBO, and the
    verdicts at no knee (key None) and at every candidate, which the miner's checks reuse."""

    miner: str
    labels: tuple[LabelRow, ...]
    split_at: datetime
    fit: tuple[str, ...]
    judged: tuple[str, ...]
    candidates: tuple[Value, ...]
    kappa_star: Value | None
    counts: Confusion
    lead: dict[str, float]
    pbo: Pbo
    verdicts: Mapping[Value | None, Verdicts] = field(repr=False)

    @property
    def at_kappa(self) -> Verdicts:
        """The verdicts at κ* (with no knee when κ* is None)."""
        return self.verdicts[self.kappa_star]

    @property
    def missed_nothing(self) -> bool:
        """FN = 0 on the judged half, with a knee fitted whenever there were candidates."""
        return not self.counts.fn and (self.kappa_star is not None or not self.candidates)

    def record(self) -> Backtest:
        """The ``schemas.Backtest`` record (``--json``)."""
        return Backtest(
            miner=self.miner,
            split_at=self.split_at,
            kappa_star=None if self.kappa_star is None else float(self.kappa_star),
            families=len(self.candidates),
            fit=self.fit,
            judged=self.judged,
            tp=self.counts.tp,
            fp=self.counts.fp,
            fn=self.counts.fn,
            lead_s=self.lead,
            pbo=self.pbo.value,
            pbo_status=self.pbo.status,
        )

    def rows(self) -> list[tuple[str, str]]:
        """The block's rows, ``(name, value)``."""
        return [
            ("Backtest split $t$", self._split()),
            (
                "Backtest families",
                f"{len(self.candidates)} ($K$ = {{{', '.join(map(number, self.candidates))}}})",
            ),
            (f"Backtest {_KAPPA}", self._kappa()),
            ("Backtest TP", _listed(self.counts.tp)),
            ("Backtest FP", _listed(self.counts.fp)),
            ("Backtest FN", _listed(self.counts.fn)),
            ("Backtest lead", self._lead()),
            ("Backtest PBO", self.pbo.describe()),
        ]

    def markdown(self) -> str:
        """The backtest block: a two-column markdown table, one row per line."""
        lines = [f"| Backtest | {self.miner} |", "| --- | --- |"]
        lines += [f"| {name} | {value} |" for name, value in self.rows()]
        return "\n".join(lines) + "\n"

    def _split(self) -> str:
        label = math.ceil(len(self.labels) / 2)
        where = f"the start of label {label} of {len(self.labels)} by start"
        return (
            f"{format_time(self.split_at)} ({where}; {len(self.fit)} fit {_FIT}, {len(self.judged)} judged)"
        )

    def _kappa(self) -> str:
        count = f"{len(self.candidates)} candidate{'' if len(self.candidates) == 1 else 's'} from `score`"
        if self.kappa_star is not None:
            return f"{number(self.kappa_star)} (argmax precision on {_FIT} s.t. FN = 0; {count})"
        if not self.candidates:
            return "none (no `score` facts: the rule is judged with an empty `knee` relation)"
        return f"none (no candidate has FN = 0 on {_FIT}; {count})"

    def _lead(self) -> str:
        if not self.lead:
            return (
                "n/a (no true positive with a flagged time)"
                if self.kappa_star is not None
                else "n/a (no knee)"
            )
        return "; ".join(f"{number(seconds)} s: {instance}" for instance, seconds in self.lead.items())


def _listed(instances: Sequence[str]) -> str:
    return f"{len(instances)}: {', '.join(instances)}" if instances else "0"


def _lead(labels: Sequence[LabelRow], tp: Sequence[str], kappa: Value | None) -> dict[str, float]:
    if kappa is None or isinstance(kappa, str):
        return {}
    by_instance = {row.instance: row for row in labels}
    return {
        instance: (flagged - by_instance[instance].start).total_seconds() - float(kappa)
        for instance in tp
        if (flagged := by_instance[instance].flagged) is not None
    }


def _check_extracted(labels: Labels, extracted: Extracted) -> None:
    for row in labels.rows:
        if row.instance not in extracted.facts:
            raise MinerUsageError(
                f"{labels.where(row.instance)}: {row.instance} is labelled but no ITEM is that run"
            )


def backtest(
    miner: str,
    rules: Rules,
    verdicts: Sequence[str],
    labels: Labels,
    extracted: Extracted,
    blocks: int = DEFAULT_BLOCKS,
) -> BacktestResult:
    """Backtest ``rules`` over the extracted facts against ``labels``. Every labelled instance must
    be among the extracted ones (``MinerUsageError`` naming the label's file:row otherwise)."""
    _check_extracted(labels, extracted)
    ordered = labels.ordered()
    t, fit, judged = split(ordered)
    positives = {row.instance for row in ordered if row.positive}
    candidates = extracted.scores(_instances(ordered))
    found = {knee: judge(rules, verdicts, extracted, knee) for knee in (None, *candidates)}
    flags = {kappa: found[kappa].flagged for kappa in candidates}
    kappa = best_knee(flags, _instances(fit), positives)
    counts = confusion(found[kappa].flagged, _instances(judged), positives)
    return BacktestResult(
        miner=miner,
        labels=ordered,
        split_at=t,
        fit=_instances(fit),
        judged=_instances(judged),
        candidates=candidates,
        kappa_star=kappa,
        counts=counts,
        lead=_lead(ordered, counts.tp, kappa),
        pbo=pbo([(row.instance, row.positive) for row in ordered], flags, blocks),
        verdicts=found,
    )


def _instances(rows: Sequence[LabelRow]) -> tuple[str, ...]:
    return tuple(row.instance for row in rows)

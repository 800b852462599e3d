"""A benchmark's evaluation as markdown: overall and per family, every method on the same cases, with
intervals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ouroboros_gates.decider.learn.benchmark_methods import DESCRIBED

__all__ = ["render_benchmark"]


def render_benchmark(data: Mapping[str, Any]) -> str:
    """The evaluation as markdown: overall and per family, every method on the same cases, with intervals."""
    methods = [m for m in DESCRIBED if m in data["overall"]]
    lines = [
        f"Cases: {data['overall']['cases']} ({data['overall']['positive']} vulnerable), {data['folds']} "
        "grouped folds "
        f"(a case is a group), {data['resamples']} case-bootstrap resamples; program "
        f"{data['program']['kind']} "
        f"({data['program']['id'][:12]}), embedding {data['program']['embedding']}.",
        "",
        "| family | cases (+/-) | method | TPR | FPR | Youden J | precision |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    rows = [("overall", data["overall"]), *data["by_family"].items()]
    lines += [_table_row(family, row, method) for family, row in rows for method in methods]
    diff = data["overall"]["j_difference"]
    lines += [
        "",
        f"J difference ({diff['of']}), overall: {diff['value']} [{diff['low']}, {diff['high']}].",
        "",
    ]
    lines += _described(methods)
    return "\n".join(lines) + "\n"


def _table_row(family: str, row: Mapping[str, Any], method: str) -> str:
    """One method's rates on one family's cases (or all of them)."""
    rates = row[method]
    return (
        f"| {family} | {row['cases']} ({row['positive']}/{row['negative']}) | {method} | "
        f"{_cell(rates, 'tpr')} | {_cell(rates, 'fpr')} | {_cell(rates, 'j')} | "
        f"{_cell(rates, 'precision')} |"
    )


def _cell(rates: Mapping[str, Any], stat: str) -> str:
    """A rate and its interval, or ``n/a`` where it is undefined."""
    v = rates[stat]
    if v["value"] is None:
        return "n/a"
    return f"{v['value']:.2f} [{v['low']:.2f}, {v['high']:.2f}]"


def _described(methods: Sequence[str]) -> list[str]:
    """A bullet describing each method shown."""
    return [f"- `{m}`: {text}" for m, text in DESCRIBED.items() if m in methods]

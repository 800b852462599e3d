"""The evaluation report as markdown (the JSON is the evaluation's data itself)."""

from __future__ import annotations

from typing import Any

from ouroboros_gates.decider.learn.metrics import Interval

__all__ = ["render_markdown"]

_COLUMNS = (
    ("recall_block", "recall @BLOCK", False),
    ("precision_block", "precision @BLOCK", False),
    ("recall_advisory", "recall @ADVISORY", False),
    ("precision_advisory", "precision @ADVISORY", False),
    ("false_blocks_per_100_benign", "false BLOCKs /100 benign", True),
    ("false_blocks_per_100_repairs", "false BLOCKs /100 repairs", True),
    ("pr_auc", "PR-AUC (deltas)", False),
    ("pr_auc_pin", "PR-AUC (pins)", False),
    ("balanced_brier", "balanced Brier", False),
    ("share_unsure", "unsure", False),
)


def _cell(stratum: dict[str, Any], key: str, percent: bool) -> str:
    value = stratum.get(key) or {}
    return Interval(value.get("value"), value.get("low"), value.get("high")).text(percent)


def _points(point: dict[str, Any] | None, offered: bool | None) -> str:
    """The operating points an adopted program would carry: ``p ≥ t`` for BLOCK (when offered) and
    ADVISORY."""
    if point is None:
        return "n/a"
    block = f"BLOCK p ≥ {point['block']:.3f}" if offered and point.get("block") is not None else "no BLOCK"
    advisory = f"ADVISORY p ≥ {point['advisory']:.3f}" if point.get("advisory") is not None else "no ADVISORY"
    return f"{block}; {advisory}"


def _row(name: str, stratum: dict[str, Any], point: dict[str, Any] | None = None) -> str:
    head = f"| {name} | {stratum['repositories']} |"
    if stratum.get("insufficient"):
        return head + _insufficient(stratum)
    offered = stratum.get("block_offered")
    cells = [_cell(stratum, key, percent) for key, _, percent in _COLUMNS]
    return head + " " + " | ".join(cells) + f" | {_block(stratum, offered)} | {_points(point, offered)} |"


def _insufficient(stratum: dict[str, Any]) -> str:
    """A stratum without numbers: why, then empty cells."""
    why = f" ({stratum['reason']})" if stratum.get("reason") else ""
    return f" {stratum['insufficient']}{why} |" + " |" * len(_COLUMNS)


def _block(stratum: dict[str, Any], offered: bool | None) -> str:
    """Whether BLOCK is offered (in how many folds), or why not."""
    if offered is None:
        return "n/a"
    folds = f" in {stratum['block_folds']} folds" if stratum.get("block_folds") else ""
    return f"offered{folds}" if offered else f"not offered ({stratum.get('block_reason')})"


def _held(value: Any) -> str:
    if isinstance(value, str):
        return value
    pr = value["pr_auc_raw"]
    return (
        f"{value['repositories']} repositories held out, {value['scored_units']} units scored, raw PR-AUC "
        f"{Interval(pr['value'], pr['low'], pr['high']).text()}"
    )


def _pr_auc_line(data: dict[str, Any]) -> str:
    """The pooled PR-AUC on both bases, and each measured family's: delta units (a change, as a push is
    decided) and pin units (a function alone, as ``ouro scan`` sees it)."""
    pooled = data["pooled"]
    if pooled.get("insufficient"):
        return f"PR-AUC (pooled): {pooled['insufficient']}."
    measured = _measured_families(data["families"])
    families = f"; per family: {'; '.join(measured)}" if measured else ""
    return f"PR-AUC (pooled): {_both_bases(pooled)}{families}."


def _both_bases(stratum: dict[str, Any]) -> str:
    """A stratum's PR-AUC on delta units and on pin units."""
    return (
        f"{_cell(stratum, 'pr_auc', False)} on delta units, {_cell(stratum, 'pr_auc_pin', False)} "
        "on pin units"
    )


def _measured_families(families: dict[str, Any]) -> list[str]:
    """Each family with numbers, and its PR-AUC on both bases."""
    return [f"`{name}` {_both_bases(s)}" for name, s in families.items() if not s.get("insufficient")]


def render_markdown(data: dict[str, Any], title: str = "Evaluation") -> str:
    """Per-family and per-language tables with 95% repository-cluster bootstrap intervals."""
    program = data.get("program", {})
    lines = [
        f"## {title}",
        "",
        f"Program `{program.get('kind', '?')}` {program.get('id', '')}; labels "
        f"`{data['label_set_digest'][:12]}`, "
        f"folds `{data['folds_digest'][:12]}`; {data['units']} units in {data['groups']} repository groups, "
        f"{data['compile_groups']} groups held for compiling; {data['evaluated_units']} units evaluated on "
        "the outer "
        f"folds; spend ${data['usd']:.4f}. Intervals: {data['resamples']:,} resamples of repositories.",
        "",
        "The BLOCK columns show the BLOCK points each fold chose on the other folds; where the BLOCK column "
        "says "
        "*not offered*, the program reports ADVISORY at most. A labelled unit no instrument surfaced (a "
        "reach miss) "
        "counts against recall.",
        "",
        _pr_auc_line(data),
        "",
    ]
    header, rule = _table_head()
    points = data.get("adopted", {}).get("operating_points", {})
    lines += ["### By family (calibrated per family; pooled across families in `*`)", "", header, rule]
    lines.append(_row("`*` (pooled)", data["pooled"]))
    lines += [_row(f"`{name}`", s, points.get(name)) for name, s in data["families"].items()]
    lines += ["", "### By language", "", header, rule]
    lines += [_row(f"`{name}`", s) for name, s in data["languages"].items()]
    lines += _reach_lines(data.get("reach") or {})
    lines += ["", "### Other folds", ""]
    lines += [_other_folds_line(data, kind) for kind in ("leave_one_source_out", "leave_one_framework_out")]
    return "\n".join(lines) + "\n"


def _table_head() -> tuple[str, str]:
    """A stratum table's header and rule: the metric columns, then BLOCK and the points."""
    header = (
        "| stratum | repositories | " + " | ".join(label for _, label, _ in _COLUMNS) + " | BLOCK | points |"
    )
    return header, "|" + " --- |" * (len(_COLUMNS) + 4)


def _reach_lines(reach: dict[str, Any]) -> list[str]:
    if not reach:
        return []
    shown = ", ".join(f"{f} {r['surfaced']}/{r['positives']}" for f, r in reach.items())
    return ["", f"Reach (labelled positive units an instrument surfaced): {shown}."]


def _other_folds_line(data: dict[str, Any], kind: str) -> str:
    """One kind of held-out fold: each slice's PR-AUC, or why it is not evaluated."""
    entries = data.get(kind) or {}
    shown = "; ".join(f"{k}: {_held(v)}" for k, v in entries.items()) or "none"
    return f"- {kind.replace('_', '-')}: {shown}"

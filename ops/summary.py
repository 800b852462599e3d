"""The main job's summary of findings and backtests, read back from the event log."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table
from sqlalchemy import select

from ouroboros_gates.events import SqlEventStore, iter_all
from ouroboros_gates.events.projections.findings import findings
from ouroboros_gates.events.projections.labels import labels
from ouroboros_gates.schemas import MinerAcceptance, MinerAccepted, MinerRefused
from ouroboros_gates.schemas.settings import Settings

__all__ = ["print_backtests", "print_decisions", "print_findings", "print_labels", "print_series"]


def print_labels(store: SqlEventStore, console: Console) -> None:
    """The labels the labeler proposed, with their acceptance and why (nothing when it has not run)."""
    with store.reading() as conn:
        rows = list(conn.execute(select(labels).order_by(labels.c.ticket, labels.c.position)).mappings())
    if not rows:
        return
    accepted = sum(1 for row in rows if row["acceptance"] == "ACCEPTANCE_ACCEPTED")
    rejected = sum(1 for row in rows if row["acceptance"] == "ACCEPTANCE_REJECTED")
    table = Table(title=f"Labels proposed: {len(rows)} ({accepted} accepted, {rejected} rejected)")
    for name in ("ticket", "instance", "+/-", "line", "acceptance", "why"):
        table.add_column(name)
    for row in rows:
        acceptance = row["acceptance"].removeprefix("ACCEPTANCE_").lower()
        where = f"{Path(row['file']).name}:{row['line']}"
        table.add_row(f"#{row['ticket']}", row["instance"][:12], "+" if row["positive"] else "-", where, acceptance,
                      row["why"] or row["reason"])  # fmt: skip
    console.print(table)


def print_findings(store: SqlEventStore, chosen: set[str], console: Console) -> None:
    """Findings per miner and rule, and the first one's proof in full (each fact with file:line)."""
    with store.reading() as conn:
        rows = list(
            conn.execute(
                select(findings).where(findings.c.run.in_(sorted(chosen))).order_by(findings.c.miner, findings.c.run)
            ).mappings()
        )
    if not rows:
        console.print("Findings: none (no accepted miner fired on these runs)")
        return
    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row in rows:
        grouped[(row["miner"], row["rule"])].append(row["run"][:8])
    table = Table(title=f"Findings: {len(rows)}")
    for name in ("miner", "verdict", "scope", "findings", "runs"):
        table.add_column(name)
    scopes = {(row["miner"], row["rule"]): row["scope"] for row in rows}
    for (miner, rule), runs in sorted(grouped.items()):
        distinct = sorted(set(runs))
        table.add_row(miner, rule, scopes[(miner, rule)], str(len(runs)), f"{len(distinct)}: {', '.join(distinct)}")
    console.print(table)
    shown: set[str] = set()
    for row in rows:  # one proof in full per miner
        if row["miner"] not in shown:
            shown.add(row["miner"])
            _print_proof(row, console)


def _print_proof(row: Any, console: Console) -> None:
    subject = ", ".join(_arg(arg) for arg in orjson.loads(row["subject"]))
    console.print(f"Proof of {row['miner']}: {row['rule']}({subject})")
    for fact in row["proof"]:
        args = ", ".join(_arg(arg) for arg in fact["args"])
        span = fact.get("span")
        where = f"{_short(span['file'])}:{span['line']}" if span else "(the fitted knee)"
        console.print(f"  {fact['predicate']}({args})  [dim]{where}[/]")


def _arg(arg: dict[str, object]) -> str:
    value = next(iter(arg.values()))
    return f"{value:g}" if isinstance(value, float) else str(value)


def _short(file: str) -> str:
    """A source file as the user knows it: relative to the working directory when under it."""
    path = Path(file)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return file


def print_backtests(store: SqlEventStore, console: Console) -> None:
    """Each accepted miner's backtest row (the one it was accepted on); a miner whose latest version the fleet
    refused is listed under the table with the reason."""
    accepted: dict[str, MinerAcceptance] = {}
    refused: dict[str, str] = {}
    for event in iter_all(store):
        if event.type == MinerAccepted.TYPE:
            acceptance = event.decode_as(MinerAccepted).acceptance
            accepted[acceptance.miner] = acceptance
            refused.pop(acceptance.miner, None)
        elif event.type == MinerRefused.TYPE:
            refusal = event.decode_as(MinerRefused)
            accepted.pop(refusal.miner, None)
            refused[refusal.miner] = refusal.reason
    table = Table(title=f"Accepted miners: {len(accepted)}")
    for name in ("miner", "scope", "κ*", "families", "TP", "FP", "FN", "PBO", "mutation"):
        table.add_column(name, justify="left" if name in ("miner", "scope", "PBO") else "right")
    for name, acc in sorted(accepted.items()):
        bt = acc.backtest
        kappa = "-" if bt.kappa_star is None else f"{bt.kappa_star:g}"
        pbo = bt.pbo_status if bt.pbo is None else f"{bt.pbo:.2f}"
        table.add_row(name, acc.scope.value, kappa, str(bt.families), str(bt.tp), str(bt.fp), str(bt.fn),
                      pbo, f"{acc.mutation_score:.2f} (floor {acc.mutation_floor:.2f})")  # fmt: skip
    console.print(table)
    for name, reason in sorted(refused.items()):
        console.print(f"refused: {name}: {reason}", markup=False, highlight=False)


_SHOWN = (
    "ouroboros.struggle_rate_per_1k_tool_calls_weekly",
    "ouroboros.compounding_per_week",
    "ouroboros.compounding_per_day",
    "ouroboros.findings",
    "ouroboros.fixer_spend_usd",
    "ouroboros.fixer_yield",
)


def print_series(settings: Settings, console: Console) -> None:
    """The measured series from the snapshot the measurer wrote: the latest point of each, or why none."""
    path = settings.state_dir / "ouroboros.json"
    if not path.exists():
        console.print("Series: not measured (no run has a timestamp)")
        return
    snap = orjson.loads(path.read_bytes())
    table = Table(title=f"Measured as of {snap['generated_at']}")
    for name in ("series", "latest", "95% interval / note"):
        table.add_column(name)
    hf = snap["h_fleet"]
    value = "-" if hf["value"] is None else f"{hf['value']:.4f}"
    table.add_row("ouroboros.h_fleet", value, f"floor {hf['floor']}; {len(hf['offenders'])} run(s) below it")
    for name in _SHOWN:
        points = snap["series"].get(name) or []
        if not points:
            continue
        for point in points if name == "ouroboros.findings" else points[-1:]:  # one point per scope
            _series_row(table, name, point)
    console.print(table)


def _series_row(table: Table, name: str, point: dict[str, Any]) -> None:
    if point["value"] is None:
        table.add_row(name, "-", point.get("reason") or "")
        return
    interval = f"[{point['low']:.4f}, {point['high']:.4f}]" if point.get("low") is not None else ""
    labels = ", ".join(f"{k}={v}" for k, v in sorted(point.get("labels", {}).items()) if k in ("scope", "period"))
    table.add_row(name, f"{point['value']:.4f}", " ".join(x for x in (interval, labels) if x))


def print_decisions(store: SqlEventStore, settings: Settings, console: Console) -> None:
    """The decider's answers on the forge's pushes: BLOCK / ADVISORY / DROP with p and the rationale."""
    from ouroboros_gates.ops.pushes import decisions_of, forge_pushes, push_message

    pushes = forge_pushes(settings)
    if not pushes:
        return
    found = [decisions_of(store, p.head, push_message(p, settings.tenant).message_id) for p in pushes]
    variants = {d.variant for decided in found for d in decided}
    how = " — memory-vote program (no chat model configured), $0" if "memory-vote" in variants else ""
    console.print(f"[bold]Decisions on the example pushes: {len(pushes)}[/]{how}")
    for number, (push, decided) in enumerate(zip(pushes, found, strict=True), 1):
        console.print(f"  push {number} {push.base[:7]}..{push.head[:7]}: {len(decided) or 'no'} candidate(s)")
        for d in sorted(decided, key=lambda d: (("BLOCK", "ADVISORY", "DROP").index(d.action.value), d.candidate.key)):
            p = "    -" if d.p is None else f"{d.p:5.2f}"
            where = f"{d.candidate.family} {d.candidate.path} {d.candidate.function}"
            console.print(f"    {d.action.value:<8} {p}  {where}: {d.rationale}", markup=False, highlight=False)

"""The main job's summary, read back from the event log's projections: the runs ingested, findings with a
proof, backtests, labels, decisions on the example pushes, the series and the ledger itself. The sections
on the loop's hands (pre-check verdicts and label requests, fixer sessions, the merge train) are in
``summary_hands``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table
from sqlalchemy import func, select

from ouroboros_gates.events import EventStore, LedgerStore, StoredEvent, iter_all
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projections.findings import findings
from ouroboros_gates.events.projections.labels import labels
from ouroboros_gates.events.projections.runs import runs as run_rows
from ouroboros_gates.events.projector import content_digest, status
from ouroboros_gates.ops.loop.pushes import forge_pushes
from ouroboros_gates.ops.pushes import Push, decisions_of, push_message
from ouroboros_gates.schemas import Decision, MinerAcceptance, MinerAccepted, MinerRefused
from ouroboros_gates.schemas.settings import Settings

__all__ = [
    "print_backtests",
    "print_decisions",
    "print_findings",
    "print_labels",
    "print_ledger",
    "print_runs",
    "print_series",
    "titled_table",
]


def titled_table(title: str, columns: Iterable[str], right: Collection[str] = ()) -> Table:
    """A table with these columns, left-justified but for those in ``right``."""
    table = Table(title=title)
    for name in columns:
        table.add_column(name, justify="right" if name in right else "left")
    return table


def print_labels(store: LedgerStore, console: Console) -> None:
    """The labels the labeler proposed, with their acceptance and why (nothing when it has not run)."""
    with store.reading() as conn:
        rows = list(conn.execute(select(labels).order_by(labels.c.ticket, labels.c.position)).mappings())
    if not rows:
        return
    table = titled_table(_labels_title(rows), ("ticket", "instance", "+/-", "line", "acceptance", "why"))
    for row in rows:
        table.add_row(*_label_cells(row, console))
    console.print(table)


def _labels_title(rows: list[Any]) -> str:
    """How many labels were proposed, accepted and rejected."""
    accepted = _with_acceptance(rows, "ACCEPTANCE_ACCEPTED")
    rejected = _with_acceptance(rows, "ACCEPTANCE_REJECTED")
    return f"Labels proposed: {len(rows)} ({accepted} accepted, {rejected} rejected)"


def _with_acceptance(rows: list[Any], acceptance: str) -> int:
    """How many labels have this acceptance."""
    return sum(1 for row in rows if row["acceptance"] == acceptance)


def _label_cells(row: Any, console: Console) -> tuple[str, ...]:
    """One proposed label as the table's cells."""
    return (
        f"#{row['ticket']}",
        _abbrev(row["instance"], 12, console),
        "+" if row["positive"] else "-",
        f"{Path(row['file']).name}:{row['line']}",
        row["acceptance"].removeprefix("ACCEPTANCE_").lower(),
        row["why"] or row["reason"],
    )


def print_findings(store: LedgerStore, chosen: set[str], console: Console) -> None:
    """Findings per miner and rule, and the first one's proof in full (each fact with file:line)."""
    with store.reading() as conn:
        rows = list(
            conn.execute(
                select(findings)
                .where(findings.c.run.in_(sorted(chosen)))
                .order_by(findings.c.miner, findings.c.run)
            ).mappings()
        )
    if not rows:
        console.print("Findings: none (no accepted miner fired on these runs)")
        return
    console.print(_findings_table(rows, console))
    _print_first_proofs(rows, console)


def _findings_table(rows: list[Any], console: Console) -> Table:
    """One line per miner and rule: its scope, how many findings and on which runs."""
    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row in rows:
        grouped[(row["miner"], row["rule"])].append(_abbrev(row["run"], 8, console))
    table = titled_table(f"Findings: {len(rows)}", ("miner", "verdict", "scope", "findings", "runs"))
    scopes = {(row["miner"], row["rule"]): row["scope"] for row in rows}
    for (miner, rule), runs in sorted(grouped.items()):
        distinct = sorted(set(runs))
        table.add_row(
            miner, rule, scopes[(miner, rule)], str(len(runs)), f"{len(distinct)}: {', '.join(distinct)}"
        )
    return table


def _print_first_proofs(rows: list[Any], console: Console) -> None:
    """One proof in full per miner: that of its first finding."""
    shown: set[str] = set()
    for row in rows:
        if row["miner"] not in shown:
            shown.add(row["miner"])
            _print_proof(row, console)


def _print_proof(row: Any, console: Console) -> None:
    subject = ", ".join(_arg(arg) for arg in orjson.loads(row["subject"]))
    console.print(f"Proof of {row['miner']}: {row['rule']}({subject})")
    for fact in row["proof"]:
        console.print(_fact_line(fact))


def _fact_line(fact: dict[str, Any]) -> str:
    """One fact of a proof with where it was read (file:line)."""
    args = ", ".join(_arg(arg) for arg in fact["args"])
    span = fact.get("span")
    where = f"{_short(span['file'])}:{span['line']}" if span else "(the fitted knee)"
    return f"  {fact['predicate']}({args})  [dim]{where}[/]"


def _arg(arg: dict[str, object]) -> str:
    value = next(iter(arg.values()))
    return f"{value:g}" if isinstance(value, float) else str(value)


def _abbrev(value: str, size: int, console: Console) -> str:
    """``value`` cut to its first ``size`` characters on a terminal, whole anywhere else (piped,
    ``--json``)."""
    return value[:size] if console.is_terminal else value


def _short(file: str) -> str:
    """A source file as the user knows it: relative to the working directory when under it."""
    path = Path(file)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return file


@dataclass
class _Acceptances:
    """Each miner's latest word from the fleet: the acceptance it holds, or the reason it was refused."""

    accepted: dict[str, MinerAcceptance] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)

    def accept(self, event: StoredEvent) -> None:
        acceptance = event.decode_as(MinerAccepted).acceptance
        self.accepted[acceptance.miner] = acceptance
        self.refused.pop(acceptance.miner, None)

    def refuse(self, event: StoredEvent) -> None:
        refusal = event.decode_as(MinerRefused)
        self.accepted.pop(refusal.miner, None)
        self.refused[refusal.miner] = refusal.reason


def _acceptances(store: EventStore) -> _Acceptances:
    """The miners' acceptances and refusals, folded from the log in order."""
    folded = _Acceptances()
    on_event = {MinerAccepted.TYPE: folded.accept, MinerRefused.TYPE: folded.refuse}
    for event in iter_all(store):
        if event.type in on_event:
            on_event[event.type](event)
    return folded


_BACKTEST_COLUMNS = ("miner", "scope", "κ*", "families", "TP", "FP", "FN", "PBO", "mutation")


def print_backtests(store: EventStore, console: Console) -> None:
    """Each accepted miner's backtest row (the one it was accepted on); a miner whose latest version the fleet
    refused is listed under the table with the reason."""
    folded = _acceptances(store)
    table = titled_table(
        f"Accepted miners: {len(folded.accepted)}",
        _BACKTEST_COLUMNS,
        right=set(_BACKTEST_COLUMNS) - {"miner", "scope", "PBO"},
    )
    for name, acc in sorted(folded.accepted.items()):
        table.add_row(*_backtest_cells(name, acc))
    console.print(table)
    for name, reason in sorted(folded.refused.items()):
        console.print(f"refused: {name}: {reason}", markup=False, highlight=False)


def _backtest_cells(name: str, acc: MinerAcceptance) -> tuple[str, ...]:
    """An accepted miner's backtest as the table's cells."""
    bt = acc.backtest
    return (
        name,
        acc.scope.value,
        "-" if bt.kappa_star is None else f"{bt.kappa_star:g}",
        str(bt.families),
        str(bt.tp),
        str(bt.fp),
        str(bt.fn),
        bt.pbo_status if bt.pbo is None else f"{bt.pbo:.2f}",
        f"{acc.mutation_score:.2f} (floor {acc.mutation_floor:.2f})",
    )


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
    console.print(_series_table(orjson.loads(path.read_bytes())))


def _series_table(snap: dict[str, Any]) -> Table:
    """H_fleet first, then the shown points of each series."""
    table = titled_table(
        f"Measured as of {snap['generated_at']}", ("series", "latest", "95% interval / note")
    )
    hf = snap["h_fleet"]
    value = "-" if hf["value"] is None else f"{hf['value']:.4f}"
    table.add_row("ouroboros.h_fleet", value, f"floor {hf['floor']}; {len(hf['offenders'])} run(s) below it")
    for name in _SHOWN:
        for point in _shown_points(snap, name):
            _series_row(table, name, point)
    return table


def _shown_points(snap: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The points of a series the summary shows: one point per scope for the findings, else the latest."""
    points: list[dict[str, Any]] = snap["series"].get(name) or []
    return points if name == "ouroboros.findings" else points[-1:]


def _series_row(table: Table, name: str, point: dict[str, Any]) -> None:
    if point["value"] is None:
        table.add_row(name, "-", point.get("reason") or "")
        return
    table.add_row(name, f"{point['value']:.4f}", _point_note(point))


def _point_note(point: dict[str, Any]) -> str:
    """A measured point's 95% interval (when it has one) and its scope and period labels."""
    interval = f"[{point['low']:.4f}, {point['high']:.4f}]" if point.get("low") is not None else ""
    return " ".join(x for x in (interval, _scope_and_period(point)) if x)


def _scope_and_period(point: dict[str, Any]) -> str:
    """A point's scope and period labels, as ``k=v`` in order."""
    return ", ".join(
        f"{k}={v}" for k, v in sorted(point.get("labels", {}).items()) if k in ("scope", "period")
    )


_ACTIONS = ("BLOCK", "ADVISORY", "DROP")
"""The order in which a push's decisions are listed."""


def print_decisions(store: EventStore, settings: Settings, console: Console) -> None:
    """The decider's answers on the forge's pushes: BLOCK / ADVISORY / DROP with p and the rationale."""
    pushes = forge_pushes(settings)
    if not pushes:
        return
    found = [decisions_of(store, p.head, push_message(p, settings.tenant).message_id) for p in pushes]
    console.print(f"[bold]Decisions on the example pushes: {len(pushes)}[/]{_how_decided(found)}")
    for number, (push, decided) in enumerate(zip(pushes, found, strict=True), 1):
        _print_push(number, push, decided, console)


def _print_push(number: int, push: Push, decided: list[Decision], console: Console) -> None:
    """A push's refs and how many candidates it had, then its decisions in order."""
    console.print(f"  push {number} {push.base[:7]}..{push.head[:7]}: {len(decided) or 'no'} candidate(s)")
    for d in sorted(decided, key=_decision_order):
        console.print(_decision_line(d), markup=False, highlight=False)


def _how_decided(found: list[Any]) -> str:
    """A note on the title when the memory-vote program (no chat model) decided."""
    variants = {d.variant for decided in found for d in decided}
    return " — memory-vote program (no chat model configured), $0" if "memory-vote" in variants else ""


def _decision_order(d: Any) -> tuple[int, str]:
    """BLOCK first, then ADVISORY, then DROP; by candidate within each."""
    return _ACTIONS.index(d.action.value), d.candidate.key


def _decision_line(d: Any) -> str:
    """One decision: the action, p and where, with the rationale."""
    p = "    -" if d.p is None else f"{d.p:5.2f}"
    where = f"{d.candidate.family} {d.candidate.path} {d.candidate.function}"
    return f"    {d.action.value:<8} {p}  {where}: {d.rationale}"


_RUN_COUNTS = ("lines", "tool_calls", "tool_errors", "malformed")


@dataclass
class _RunTotals:
    """The runs' counts and cost summed, for the table's last line."""

    counts: list[int] = field(default_factory=lambda: [0] * len(_RUN_COUNTS))
    cost: float = 0.0

    def add(self, row: Any, cost: float) -> None:
        for i, key in enumerate(_RUN_COUNTS):
            self.counts[i] += row[key]
        self.cost += cost

    def cells(self) -> tuple[str, ...]:
        return ("total", *(str(int(v)) for v in self.counts), f"{self.cost:.4f}", "")


def print_runs(store: LedgerStore, chosen: set[str], console: Console) -> None:
    """The runs ingested: lines, tool calls, errors, malformed lines, cost and the cache-read share."""
    columns = ("run", "lines", "tool calls", "errors", "malformed", "cost USD", "cache read / input")
    table = titled_table("Runs ingested", columns, right=columns[1:])
    totals = _RunTotals()
    with store.reading() as conn:
        rows = conn.execute(
            select(run_rows).where(run_rows.c.run.in_(sorted(chosen))).order_by(run_rows.c.run)
        ).mappings()
        for row in rows:
            cost = row["cost_usd"] or 0.0
            table.add_row(*_run_cells(row, cost))
            totals.add(row, cost)
    table.add_section()
    table.add_row(*totals.cells())
    console.print(table)


def _run_cells(row: Any, cost: float) -> tuple[str, ...]:
    """One run as the table's cells; the cache-read share of the input it saw."""
    seen = row["input_tokens"] + row["cache_creation_input_tokens"] + row["cache_read_input_tokens"]
    ratio = f"{row['cache_read_input_tokens'] / seen:.4f}" if seen else "-"
    return (
        row["run"],
        str(row["lines"]),
        str(row["tool_calls"]),
        str(row["tool_errors"]),
        str(row["malformed"]),
        f"{cost:.4f}",
        ratio,
    )


def print_ledger(store: LedgerStore, console: Console) -> None:
    """The event log's size, each projection's rows, checkpoint and lag, and the ledger's content digest."""
    with store.reading() as conn:
        events = int(conn.execute(select(func.count()).select_from(t.events)).scalar_one())
        streams = int(conn.execute(select(func.count(func.distinct(t.events.c.stream)))).scalar_one())
    table = Table(title=f"Event log: {events} events in {streams} streams")
    table.add_column("projection")
    table.add_column("rows", justify="right")
    table.add_column("checkpoint", justify="right")
    table.add_column("lag", justify="right")
    for item in status(store, PROJECTIONS):
        table.add_row(item.name, str(item.rows), str(item.position), str(item.lag))
    console.print(table)
    console.print(
        f"ledger digest {content_digest(store, PROJECTIONS)[0][:16]} (log positions and times left out)"
    )

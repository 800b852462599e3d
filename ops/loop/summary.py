"""The main job's summary, read back from the event log's projections: the runs ingested, findings with a
proof, backtests, pre-check verdicts and label requests, labels, fixer sessions, the merge train, decisions
on the example pushes, the series and the ledger itself (``ouro train`` and ``ouro fix`` print their
parts)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table
from sqlalchemy import func, select

from ouroboros_gates.events import EventStore, LedgerStore, iter_all
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projections.findings import findings
from ouroboros_gates.events.projections.labels import label_requests, labels
from ouroboros_gates.events.projections.loop import closed_tickets, fixer_sessions, merges
from ouroboros_gates.events.projections.proposals import verdicts
from ouroboros_gates.events.projections.runs import runs as run_rows
from ouroboros_gates.events.projector import content_digest, status
from ouroboros_gates.llm import endpoint_from_settings
from ouroboros_gates.ops.loop.hands import fixers_refusal
from ouroboros_gates.ops.loop.pushes import forge_pushes
from ouroboros_gates.ops.precheck import verdict_lines
from ouroboros_gates.ops.pushes import decisions_of, push_message
from ouroboros_gates.schemas import FixerSessionEnded, MinerAcceptance, MinerAccepted, MinerRefused
from ouroboros_gates.schemas.settings import Settings

__all__ = [
    "print_backtests",
    "print_decisions",
    "print_findings",
    "print_fixers",
    "print_labels",
    "print_ledger",
    "print_runs",
    "print_series",
    "print_train",
    "print_verdicts",
]


def print_labels(store: LedgerStore, console: Console) -> None:
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
        table.add_row(
            f"#{row['ticket']}",
            _abbrev(row["instance"], 12, console),
            "+" if row["positive"] else "-",
            where,
            acceptance,
            row["why"] or row["reason"],
        )
    console.print(table)


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
    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row in rows:
        grouped[(row["miner"], row["rule"])].append(_abbrev(row["run"], 8, console))
    table = Table(title=f"Findings: {len(rows)}")
    for name in ("miner", "verdict", "scope", "findings", "runs"):
        table.add_column(name)
    scopes = {(row["miner"], row["rule"]): row["scope"] for row in rows}
    for (miner, rule), runs in sorted(grouped.items()):
        distinct = sorted(set(runs))
        table.add_row(
            miner, rule, scopes[(miner, rule)], str(len(runs)), f"{len(distinct)}: {', '.join(distinct)}"
        )
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


def print_backtests(store: EventStore, console: Console) -> None:
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
        table.add_row(
            name,
            acc.scope.value,
            kappa,
            str(bt.families),
            str(bt.tp),
            str(bt.fp),
            str(bt.fn),
            pbo,
            f"{acc.mutation_score:.2f} (floor {acc.mutation_floor:.2f})",
        )
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
    labels = ", ".join(
        f"{k}={v}" for k, v in sorted(point.get("labels", {}).items()) if k in ("scope", "period")
    )
    table.add_row(name, f"{point['value']:.4f}", " ".join(x for x in (interval, labels) if x))


def print_decisions(store: EventStore, settings: Settings, console: Console) -> None:
    """The decider's answers on the forge's pushes: BLOCK / ADVISORY / DROP with p and the rationale."""
    pushes = forge_pushes(settings)
    if not pushes:
        return
    found = [decisions_of(store, p.head, push_message(p, settings.tenant).message_id) for p in pushes]
    variants = {d.variant for decided in found for d in decided}
    how = " — memory-vote program (no chat model configured), $0" if "memory-vote" in variants else ""
    console.print(f"[bold]Decisions on the example pushes: {len(pushes)}[/]{how}")
    for number, (push, decided) in enumerate(zip(pushes, found, strict=True), 1):
        console.print(
            f"  push {number} {push.base[:7]}..{push.head[:7]}: {len(decided) or 'no'} candidate(s)"
        )
        for d in sorted(
            decided, key=lambda d: (("BLOCK", "ADVISORY", "DROP").index(d.action.value), d.candidate.key)
        ):
            p = "    -" if d.p is None else f"{d.p:5.2f}"
            where = f"{d.candidate.family} {d.candidate.path} {d.candidate.function}"
            console.print(
                f"    {d.action.value:<8} {p}  {where}: {d.rationale}", markup=False, highlight=False
            )


def print_runs(store: LedgerStore, chosen: set[str], console: Console) -> None:
    """The runs ingested: lines, tool calls, errors, malformed lines, cost and the cache-read share."""
    table = Table(title="Runs ingested")
    for name in ("run", "lines", "tool calls", "errors", "malformed", "cost USD", "cache read / input"):
        table.add_column(name, justify="left" if name == "run" else "right")
    totals = [0, 0, 0, 0, 0.0]
    with store.reading() as conn:
        rows = conn.execute(
            select(run_rows).where(run_rows.c.run.in_(sorted(chosen))).order_by(run_rows.c.run)
        ).mappings()
        for row in rows:
            cost = row["cost_usd"] or 0.0
            seen = row["input_tokens"] + row["cache_creation_input_tokens"] + row["cache_read_input_tokens"]
            ratio = f"{row['cache_read_input_tokens'] / seen:.4f}" if seen else "-"
            table.add_row(
                row["run"],
                str(row["lines"]),
                str(row["tool_calls"]),
                str(row["tool_errors"]),
                str(row["malformed"]),
                f"{cost:.4f}",
                ratio,
            )
            for i, key in enumerate(("lines", "tool_calls", "tool_errors", "malformed")):
                totals[i] += row[key]
            totals[4] += cost
    table.add_section()
    table.add_row("total", *(str(int(v)) for v in totals[:4]), f"{totals[4]:.4f}", "")
    console.print(table)


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


def print_verdicts(store: LedgerStore, console: Console, settings: Settings) -> None:
    """The ledger's latest verdict per ticket and the labeler's queue (the main job's section)."""
    with store.reading() as conn:
        rows = list(conn.execute(select(verdicts).order_by(verdicts.c.position)).mappings())
        queued = conn.execute(select(label_requests.c.ticket).distinct()).scalars().all()
    latest: dict[int, dict[str, Any]] = {row["ticket"]: dict(row) for row in rows}
    if not latest:
        console.print("Pre-check: no mining ticket with a proposal")
        return
    _print_latest([latest[n] for n in sorted(latest)], console)
    waiting = sorted(n for n in set(queued) if n in latest and latest[n]["verdict"] == "needs_labels")
    _print_waiting(waiting, settings, console)


def _print_latest(shown: list[dict[str, Any]], console: Console) -> None:
    """How many tickets launch and how many need labels, then one ticket's verdict a line."""
    launch = sum(1 for row in shown if row["verdict"] == "launch")
    title = f"Pre-check verdicts: {launch} launch, {len(shown) - launch} needs_labels (0 model calls)"
    console.print(title, style="bold")
    for line in verdict_lines(shown, console.width if console.is_terminal else None):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def _print_waiting(waiting: list[int], settings: Settings, console: Console) -> None:
    """The tickets whose label requests wait for the labeler, and whether a model will take them."""
    if not waiting:
        return
    tickets = ", ".join(f"#{n}" for n in waiting)
    if endpoint_from_settings(settings) is None:
        console.print(
            f"label requests queued for the labeler: {tickets} (no chat model configured: OURO_MODEL)"
        )
    else:
        console.print(f"label requests sent to the labeler: {tickets} (its labels below)")


def print_train(store: LedgerStore, console: Console, only: set[tuple[int, str]] | None = None) -> None:
    """The merge train's results and the tickets the close-ticket gate closed, from the ledger."""
    with store.reading() as conn:
        rows = list(conn.execute(select(merges).order_by(merges.c.position)).mappings())
        closed = list(conn.execute(select(closed_tickets).order_by(closed_tickets.c.ticket)).mappings())
    rows = [r for r in rows if only is None or (r["pull_request"], r["head_sha"]) in only]
    counts = {o: sum(r["outcome"] == o for r in rows) for o in ("merged", "refused")}
    table = Table(
        title=f"Merge train: {counts['merged']} merged, {counts['refused']} refused (each head once)"
    )
    for name in ("pull request", "head", "outcome", "why"):
        table.add_column(name)
    for row in rows:
        why = "; ".join(row["refusal"]) if row["refusal"] else ""
        table.add_row(f"#{row['pull_request']}", row["head_sha"][:12], row["outcome"], why)
    console.print(table)
    _print_closed(closed, console)


def _print_closed(closed: list[Any], console: Console) -> None:
    """The tickets the close-ticket gate closed."""
    for row in closed:
        console.print(
            f"close-ticket gate: #{row['ticket']} closed on #{row['pull_request']} ({row['reason']})"
        )
    if not closed:
        console.print("close-ticket gate: no ticket closed")


def print_fixers(store: LedgerStore, settings: Settings, console: Console) -> None:
    """Fixer sessions from the ledger, or why fixers are off."""
    with store.reading() as conn:
        rows = list(conn.execute(select(fixer_sessions).order_by(fixer_sessions.c.position)).mappings())
    refusal = fixers_refusal(settings)
    if not rows:
        console.print(f"Fixers: no session ({refusal or 'no ticket has a launch verdict left to take'})")
        return
    table = Table(title=f"Fixer sessions: {len(rows)}, ${sum(r['cost_usd'] for r in rows):.4f}")
    for name in ("ticket", "branch", "cost USD", "outcome", "pull request"):
        table.add_column(name)
    for row in rows:
        pull = f"#{row['pull_request']}" if row["pull_request"] else "-"
        table.add_row(f"#{row['ticket']}", row["branch"], f"{row['cost_usd']:.4f}", row["outcome"], pull)
    console.print(table)
    for isolation, tickets in _isolations(store, rows).items():
        console.print(f"Fixer sandbox ({', '.join(f'#{n}' for n in tickets)}): {isolation}", soft_wrap=True)


def _isolations(store: EventStore, rows: list[Any]) -> dict[str, list[int]]:
    """Which isolation each listed fixer session's agent got (as its worker said), and the tickets: read from
    the event each ledger row was folded from."""
    found: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        (event,) = store.read(after=row["position"] - 1, limit=1)
        session = event.decode_as(FixerSessionEnded).session
        isolation = session.isolation or "not recorded (a session of an earlier version)"
        if session.ticket not in found[isolation]:
            found[isolation].append(session.ticket)
    return dict(found)

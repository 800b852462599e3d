"""The main job: run the loop once on the embedded default over a corpus, and print what it found.

Every number printed is read back from the event log's projections, so a second run prints the same.
"""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table
from sqlalchemy import func, select

from ouroboros_gates.events import SqlEventStore, open_store
from ouroboros_gates.events import tables as t
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projections.runs import runs
from ouroboros_gates.events.projector import catch_up, content_digest, status
from ouroboros_gates.llm import endpoint_from_settings
from ouroboros_gates.ops.embedded import MessageFailed, SharedFleet, fleet_for, wait_handled
from ouroboros_gates.ops.ingest import expand_runs, ingest_messages
from ouroboros_gates.ops.loop_steps import loop_train, print_fixers, print_train
from ouroboros_gates.ops.precheck_run import label_through_queue, loop_forge, precheck_through_queue, print_verdicts
from ouroboros_gates.ops.pushes import decide_through_queue
from ouroboros_gates.ops.summary import print_backtests, print_decisions, print_findings, print_labels, print_series
from ouroboros_gates.schemas import IngestRun, Measure, Message, MineRun, content_id
from ouroboros_gates.schemas.settings import Settings, load_settings
from ouroboros_gates.workers import QUEUES, publish
from ouroboros_gates.workers.miner.ingest import mine_message

__all__ = ["run_loop"]


def run_loop(corpus: Path, console: Console, settings: Settings | None = None, fixers: bool = False) -> int:
    """Ingest ``corpus`` through the real queue path, fold the ledger, print the summary."""
    settings = settings or load_settings()
    settings = settings.model_copy(update={"fixers": True}) if fixers else settings
    store = open_store(settings.event_log_url)
    vanished: list[Path] = []
    messages = ingest_messages(expand_runs([str(corpus)]), settings, vanished)
    console.print(f"[bold]Ouroboros[/] on {corpus} — state in {settings.state_dir}")
    for path in vanished:
        console.print(f"[yellow]skipped {escape(str(path))}: deleted while the corpus was read[/]")
    if vanished:
        console.print(f"[yellow]{len(vanished)} run(s) skipped: their files vanished[/]")
    forge_settings = loop_forge(corpus, settings)
    # One worker for every step, started when first needed; not on the labeler's queue without a chat model,
    # where the label requests wait for a labeler that has one.
    labels = endpoint_from_settings(settings) is not None
    queues = [queue for queue in dict.fromkeys(QUEUES.values()) if labels or queue != QUEUES["labeler"]]
    shared = SharedFleet(forge_settings or settings, queues)
    try:
        if not _steps(store, settings, forge_settings, messages, shared, console):
            return 1
    except MessageFailed as failed:
        console.print(f"[red]{escape(str(failed))}[/]")
        return 1
    finally:
        shared.close()
    catch_up(store, PROJECTIONS)
    _print_runs(store, {m.run for m in messages}, console)
    print_findings(store, {m.run for m in messages}, console)
    print_backtests(store, console)
    if forge_settings is not None:
        print_verdicts(store, console, forge_settings)
        print_labels(store, console)
        print_fixers(store, forge_settings, console)
        print_train(store, console)
        print_decisions(store, forge_settings, console)
    print_series(settings, console)
    _print_ledger(store, console)
    console.print(f"ops page: `ouro serve`, then http://{settings.api_host}:{settings.api_port}/")
    return 0


def _steps(
    store: SqlEventStore,
    settings: Settings,
    forge_settings: Settings | None,
    messages: list[IngestRun],
    shared: SharedFleet,
    console: Console,
) -> bool:
    """Ingest and mine, pre-check, label, fixers and the merge train, decide, measure: each through the
    queue, each waiting for its messages; False (having said why) when one was not handled in time."""
    run_keys = [m.message_id for m in messages]  # the runs the pre-check's verdicts depend on
    if not _ingest_and_mine(store, settings, messages, shared, console):
        return False
    if forge_settings is not None:
        if precheck_through_queue(store, forge_settings, content_id(*sorted(run_keys)), shared):
            console.print("[red]the pre-check was not handled in time; see the worker log[/]")
            return False
        if label_through_queue(store, forge_settings, shared):
            console.print("[red]the label requests were not handled in time; see the worker log[/]")
            return False
        if loop_train(store, forge_settings, shared):
            console.print("[red]the fixers or the merge train were not handled in time; see the worker log[/]")
            return False
        if decide_through_queue(store, forge_settings, shared):
            console.print("[red]the example pushes were not decided in time; see the worker log[/]")
            return False
    if not _measure(store, settings, shared):
        console.print("[red]the measurement was not handled in time; see the worker log[/]")
        return False
    return True


def _measure(store: SqlEventStore, settings: Settings, shared: SharedFleet | None = None) -> bool:
    """Measure as of the last event the loop recorded (not the wall clock, and not the measurements
    themselves: a second run over the same corpus measures the same instant and prints the same)."""
    with store.reading() as conn:
        last = conn.execute(
            select(func.max(t.events.c.recorded_at)).where(t.events.c.type != "SeriesPointRecorded")
        ).scalar_one_or_none()
    if last is None:
        return True
    at = last if last.tzinfo else last.replace(tzinfo=UTC)
    message = Measure(message_id=content_id("measure", at.isoformat()), at=at, tenant=settings.tenant)
    if store.is_handled(message.TASK, message.message_id):
        return True
    with fleet_for(shared, settings, ["measurer"]) as fleet:
        publish(message)
        return not wait_handled(store, {message.message_id: message.TASK}, fleet)


def _ingest_and_mine(
    store: SqlEventStore, settings: Settings, messages: list[IngestRun], shared: SharedFleet, console: Console
) -> bool:
    """Ingest the runs not recorded yet, then wait for each run's mine: the one its recorded content asks for
    (a run still being written may have grown since its message was made), published here for a run recorded
    by an earlier run of the loop, by the ingest's outbox otherwise. False (having said why) when a message was
    not handled in time."""
    ingests = [m for m in messages if not store.is_handled(m.TASK, m.message_id)]
    earlier = _unmined(store, [m for m in messages if m not in ingests])
    if not ingests and not earlier:
        return True
    with fleet_for(shared, settings) as fleet, Progress(console=Console(stderr=True), transient=True) as progress:
        bar = progress.add_task("ingesting and mining runs through the queue", total=2 * len(ingests) + len(earlier))
        for message in [*ingests, *earlier]:
            publish(message, via=fleet.broker())
        left = wait_handled(store, {m.message_id: m.TASK for m in [*ingests, *earlier]}, fleet,
                            on_progress=lambda n: progress.advance(bar, n))  # fmt: skip
        mines = _unmined(store, ingests)
        left += wait_handled(store, {m.message_id: m.TASK for m in mines}, fleet,
                             on_progress=lambda n: progress.advance(bar, n))  # fmt: skip
    if left:
        console.print(f"[red]{len(left)} message(s) not handled in time: {', '.join(left)}[/]")
        return False
    return True


def _unmined(store: SqlEventStore, recorded: list[IngestRun]) -> list[Message]:
    """The mines not handled yet of the runs these messages recorded."""
    mines = [mine for m in recorded if (mine := _recorded_mine(store, m)) is not None]
    return [mine for mine in mines if not store.is_handled(mine.TASK, mine.message_id)]


def _recorded_mine(store: SqlEventStore, message: IngestRun) -> MineRun | None:
    """The mine a recorded ingest asked for (its id follows the content the worker read), or None."""
    for event in reversed(store.read_stream(f"run/{message.run}")):
        if event.type == "RunRecorded" and event.meta.get("message_id") == message.message_id:
            return mine_message(message, str(event.payload["digest"]))
    return None


def _print_runs(store: SqlEventStore, chosen: set[str], console: Console) -> None:
    table = Table(title="Runs ingested")
    for name in ("run", "lines", "tool calls", "errors", "malformed", "cost USD", "cache read / input"):
        table.add_column(name, justify="left" if name == "run" else "right")
    totals = [0, 0, 0, 0, 0.0]
    with store.reading() as conn:
        rows = conn.execute(select(runs).where(runs.c.run.in_(sorted(chosen))).order_by(runs.c.run)).mappings()
        for row in rows:
            cost = row["cost_usd"] or 0.0
            seen = row["input_tokens"] + row["cache_creation_input_tokens"] + row["cache_read_input_tokens"]
            ratio = f"{row['cache_read_input_tokens'] / seen:.4f}" if seen else "-"
            table.add_row(row["run"], str(row["lines"]), str(row["tool_calls"]), str(row["tool_errors"]),
                          str(row["malformed"]), f"{cost:.4f}", ratio)  # fmt: skip
            for i, key in enumerate(("lines", "tool_calls", "tool_errors", "malformed")):
                totals[i] += row[key]
            totals[4] += cost
    table.add_section()
    table.add_row("total", *(str(int(v)) for v in totals[:4]), f"{totals[4]:.4f}", "")
    console.print(table)


def _print_ledger(store: SqlEventStore, console: Console) -> None:
    from ouroboros_gates.events import tables as t

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
    console.print(f"ledger digest {content_digest(store, PROJECTIONS)[0][:16]} (log positions and times left out)")

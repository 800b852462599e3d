"""``ouro``: the command line of the fleet. Every error is one clear line and exit status 2."""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from events import OuroError, SqlEventStore, load_settings, open_store
from events.projections import PROJECTIONS
from events.projector import catch_up, digest, rebuild
from schemas import MESSAGE_TYPES, RECORD_TYPES, schema_for

__all__ = ["app", "main"]

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Ouroboros: gates from agents' mistakes.")
events_app = typer.Typer(no_args_is_help=True, help="Read the event log.")
db_app = typer.Typer(no_args_is_help=True, help="Schema migrations.")
app.add_typer(events_app, name="events")
app.add_typer(db_app, name="db")
app.add_typer(__import__("ops.corpus_cli", fromlist=["app"]).app, name="corpus")
app.add_typer(__import__("ops.measure_cli", fromlist=["measure_app"]).measure_app, name="measure")
app.add_typer(__import__("ops.miner_cli", fromlist=["miner_app"]).miner_app, name="miner")
app.add_typer(__import__("ops.miner_cli", fromlist=["datalog_app"]).datalog_app, name="datalog")
app.add_typer(__import__("ops.hooks_install", fromlist=["hooks_app"]).hooks_app, name="hooks")
app.add_typer(__import__("ops.learn_cli", fromlist=["learn_app"]).learn_app, name="learn")
app.add_typer(__import__("ops.learn_cli", fromlist=["experiment_app"]).experiment_app, name="experiment")
app.command("precheck")(__import__("ops.precheck_cli", fromlist=["precheck_cmd"]).precheck_cmd)
app.command("propose")(__import__("ops.precheck_cli", fromlist=["propose_cmd"]).propose_cmd)
app.command("label")(__import__("ops.label_cli", fromlist=["label"]).label)
__import__("ops.decider_cli", fromlist=["register"]).register(app)  # scan, pre-push, dismiss
app.command("close-ticket")(__import__("ops.loop_cli", fromlist=["close_ticket_cmd"]).close_ticket_cmd)
app.command("train")(__import__("ops.loop_cli", fromlist=["train_cmd"]).train_cmd)
app.command("fix")(__import__("ops.loop_cli", fromlist=["fix_cmd"]).fix_cmd)
console = Console()


class UsageError(OuroError):
    """A command-line argument is wrong."""


def _store() -> SqlEventStore:
    return open_store(load_settings().event_log_url)


@app.command()
def loop(
    corpus: Annotated[Path, typer.Argument(help="Directory of runs (<run>/events.jsonl).")] = Path("examples"),
    fixers: Annotated[bool, typer.Option("--fixers", help="Launch fixer sessions (sandboxed, under the cap).")] = False,
) -> None:
    """Run the whole loop once on the embedded default over CORPUS and print the summary."""
    from ops.loop import run_loop

    raise typer.Exit(run_loop(corpus, console, fixers=fixers))


@app.command()
def ingest(items: Annotated[list[str], typer.Argument(help="Run directories, files or quoted globs.")]) -> None:
    """Queue one IngestRun per run through the event log's outbox and publish it; workers record them."""
    from ops.ingest import expand_runs, ingest_messages, send_runs

    settings = load_settings()
    report = send_runs(ingest_messages(expand_runs(items), settings), settings)
    for message in report.queued:
        console.print(f"queued {message.run} ({message.message_id})")
    for message in report.already:
        console.print(f"already queued {message.run} ({message.message_id})")
    if report.published < len(report.queued):
        unsent = len(report.queued) - report.published
        Console(stderr=True).print(
            f"[yellow]{unsent} message(s) not published (broker unreachable): kept in the outbox, "
            "published by the outbox sweep (beat) once the broker is back[/]"
        )


@app.command()
def hook(
    flush: Annotated[bool, typer.Option("--flush", help="Hand the spooled runs to the fleet (IngestRun).")] = False,
    state: Annotated[str | None, typer.Option(help="State directory (default OURO_STATE).")] = None,
    timeout: Annotated[float | None, typer.Option(help="Seconds after which the call is allowed.")] = None,
) -> None:
    """Claude Code's hook: the payload on stdin; records it, spools it, decides PreToolUse (see ops/hook.py)."""
    from ops.hook import main as hook_main

    argv = ["--flush"] if flush else []
    argv += ["--state", state] if state else []
    argv += ["--timeout", str(timeout)] if timeout is not None else []
    raise typer.Exit(hook_main(argv))


@app.command("publish")
def publish_cmd(
    type_name: Annotated[str, typer.Argument(metavar="TYPE", help="Message type, e.g. Probe.")],
    body: Annotated[str, typer.Argument(metavar="JSON|-", help="The message as JSON, or - for stdin.")],
    queue: Annotated[str | None, typer.Option(help="Override the routed queue.")] = None,
) -> None:
    """Validate a message against its schema and publish it; a missing message_id is generated."""
    from workers import publish

    cls = MESSAGE_TYPES.get(type_name)
    if cls is None:
        raise UsageError(f"TYPE: unknown message type {type_name!r}; known: {', '.join(sorted(MESSAGE_TYPES))}")
    text = sys.stdin.read() if body == "-" else body
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"JSON: line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise UsageError("JSON: a message is a JSON object")
    data.setdefault("message_id", uuid.uuid4().hex)
    try:
        message = cls.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(message)"
        raise UsageError(f"{type_name}.{where}: {first['msg']}") from exc
    publish(message, queue=queue)
    console.print(f"published {type_name} {message.message_id} to {message.TASK}")


@app.command()
def worker(
    queues: Annotated[str, typer.Option("-Q", "--queues", help="Comma-separated queues.")] = "",
    concurrency: Annotated[int, typer.Option("-c", "--concurrency")] = 2,
    autoscale: Annotated[str | None, typer.Option(help="MAX,MIN processes.")] = None,
    loglevel: Annotated[str, typer.Option("-l", "--loglevel")] = "INFO",
) -> None:
    """Start a Celery worker on the given queues (all of them by default)."""
    from workers import QUEUES

    names = queues or ",".join(dict.fromkeys(QUEUES.values()))
    role = next((r for r, q in QUEUES.items() if q == names.split(",")[0]), None)
    if role and len(names.split(",")) == 1:
        os.environ.setdefault("OURO_ROLE", role)
    argv = [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "-Q", names, "-l", loglevel]
    argv += ["--autoscale", autoscale] if autoscale else ["-c", str(concurrency)]
    os.execv(sys.executable, argv)


@app.command()
def beat(loglevel: Annotated[str, typer.Option("-l", "--loglevel")] = "INFO") -> None:
    """Start Celery beat (the cron triggers)."""
    state = load_settings().state_dir / "celerybeat-schedule"
    argv = [sys.executable, "-m", "celery", "-A", "workers.app", "beat", "-l", loglevel, "-s", str(state)]
    os.execv(sys.executable, argv)


@app.command()
def flower(
    port: Annotated[int, typer.Option()] = 5555,
    address: Annotated[str, typer.Option(help="Bind address (0.0.0.0 to expose it beyond this host).")] = "127.0.0.1",
) -> None:
    """Start Flower on the broker, with basic auth from OURO_FLOWER_BASIC_AUTH (refused without it)."""
    auth = load_settings().flower_basic_auth
    if not auth or ":" not in auth:
        raise UsageError("OURO_FLOWER_BASIC_AUTH: set user:password; Flower never runs without auth")
    argv = [sys.executable, "-m", "celery", "-A", "workers.app", "flower", f"--port={port}", f"--address={address}"]
    # The credentials go through the environment, not argv, so `ps` never shows them.
    os.environ["FLOWER_BASIC_AUTH"] = auth
    os.execv(sys.executable, argv)


@app.command()
def triggers(
    count: Annotated[int, typer.Option("-n", "--count", min=1, max=50, help="Occurrences per trigger.")] = 3,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """The cron triggers: next occurrences, last outcome, and the measurement each cadence was derived from."""
    from zoneinfo import ZoneInfo

    from ops.triggers import plan
    from workers.triggers import lock_rows

    settings = load_settings()
    shown = plan(ZoneInfo(settings.timezone), datetime.now(UTC), count, lock_rows(_store().engine))
    if as_json:
        console.print_json(data=[{**asdict(p), "next": [d.isoformat() for d in p.next]} for p in shown])
        return
    for item in shown:
        last = item.last or {}
        outcome = last.get("last_outcome") or "never fired"
        console.print(f"[bold]{item.name}[/]  {item.task}  cron '{item.cron}' ({item.zone})  last: {outcome}")
        for moment in item.next:
            console.print(f"  next {moment.isoformat()}")
        console.print(f"  derived from: {item.derived_from}")


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (default OURO_API_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default OURO_API_PORT).")] = None,
    api_only: Annotated[bool, typer.Option("--api-only", help="Do not start embedded workers.")] = False,
) -> None:
    """Serve the API on 127.0.0.1 with the embedded workers in the background."""
    import uvicorn

    from ops.api import create_app
    from ops.embedded import EmbeddedFleet

    settings = load_settings()
    bind, bind_port = host or settings.api_host, port or settings.api_port
    console.print(f"ops page on http://{bind}:{bind_port}/  (API under /api, Prometheus metrics at /metrics)")
    if api_only:
        uvicorn.run(create_app(settings), host=bind, port=bind_port, log_level="warning")
        return
    with EmbeddedFleet(settings):
        console.print(f"workers up; API on http://{bind}:{bind_port}/api/status")
        uvicorn.run(create_app(settings), host=bind, port=bind_port, log_level="warning")


@app.command()
def replay(
    rebuild_all: Annotated[bool, typer.Option("--rebuild", help="Drop every projection and refold from 0.")] = False,
    as_of: Annotated[
        str | None,
        typer.Option("--as-of", metavar="TIME", help="Rebuild every projection as it stood at TIME (ISO 8601)."),
    ] = None,
) -> None:
    """Catch the projections up with the log (or rebuild them, now or as of a past time) and print the digest."""
    store = _store()
    if as_of is not None:
        moment = _instant(as_of)
        applied = rebuild(store, PROJECTIONS, until=moment)
        console.print(f"as of {moment.isoformat()}: folded the events recorded at or before it")
        for name, count in applied.items():
            console.print(f"  {name}: {count} event(s)")
        console.print(f"folded {sum(applied.values())} event(s) over {len(applied)} projection(s)")
        console.print(f"ledger digest {digest(store, PROJECTIONS)}")
        console.print(
            f"[yellow]The live ledger tables now show the past (as of {moment.isoformat()}); events folded from now"
            " on land on top of it. `ouro replay --rebuild` returns them to now.[/]"
        )
        return
    applied = rebuild(store, PROJECTIONS) if rebuild_all else catch_up(store, PROJECTIONS)
    console.print(f"applied {sum(applied.values())} event(s) over {len(applied)} projection(s)")
    console.print(f"ledger digest {digest(store, PROJECTIONS)}")


def _instant(text: str) -> datetime:
    """An ISO 8601 time (``Z`` accepted; a time without a zone is UTC)."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise UsageError(f"--as-of: {text!r} is not an ISO 8601 time (e.g. 2026-10-02T12:00:00Z)") from exc
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


@app.command()
def status(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Queue depths, dead letters, rejected messages, outbox, projection lag."""
    from ops.status import fleet_status

    snap = fleet_status(_store())
    if as_json:
        from dataclasses import asdict

        console.print_json(data=asdict(snap))
        return
    table = Table(title=f"Event log head {snap.head}")
    table.add_column("what")
    table.add_column("value", justify="right")
    for name, depth in snap.queues.items():
        table.add_row(f"queue {name}", "?" if depth is None else str(depth))
    table.add_row("dead letters recorded", str(snap.dead_letters_recorded))
    table.add_row("messages rejected", str(snap.rejected))
    table.add_row("outbox pending", str(snap.outbox_pending))
    for item in snap.projections:
        table.add_row(f"projection {item.name} lag", str(item.lag))
    console.print(table)
    if snap.broker_error:
        console.print(f"[yellow]broker: {snap.broker_error}[/]")


@app.command()
def schema(name: Annotated[str | None, typer.Argument(help="A type; omit to list them.")] = None) -> None:
    """Print a contract type's JSON Schema (or list the types)."""
    if name is None:
        for known in sorted(RECORD_TYPES):
            print(known)
        return
    try:
        print(json.dumps(schema_for(name), indent=2, sort_keys=True))
    except KeyError as exc:
        raise UsageError(f"NAME: {exc.args[0]}") from exc


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Take the database to the newest schema."""
    from events import current_revision

    store = _store()
    console.print(f"database at revision {current_revision(store.engine)}")


@events_app.command("tail")
def events_tail(
    n: Annotated[int, typer.Option("-n", help="How many of the last events.")] = 20,
    follow: Annotated[bool, typer.Option("-f", "--follow")] = False,
) -> None:
    """Print the last events as JSON lines (and follow new ones)."""
    store = _store()
    after = max(store.head() - n, 0)
    while True:
        for item in store.read(after=after, limit=1000):
            _print_event(item)
            after = item.position
        if not follow:
            return
        time.sleep(0.5)


@events_app.command("show")
def events_show(
    position: Annotated[int | None, typer.Argument(help="A position.")] = None,
    stream: Annotated[str | None, typer.Option(help="Every event of one stream.")] = None,
) -> None:
    """Print one event, or a whole stream."""
    store = _store()
    if stream:
        found = store.read_stream(stream)
    elif position is not None:
        found = [e for e in store.read(after=position - 1, limit=1) if e.position == position]
    else:
        raise UsageError("give a POSITION or --stream")
    if not found:
        raise UsageError(f"no event at {stream or position}")
    for item in found:
        _print_event(item)


def _print_event(item: Any) -> None:
    row = {k: getattr(item, k) for k in ("position", "stream", "version", "type", "payload", "meta")}
    row["recorded_at"] = item.recorded_at.isoformat()
    print(json.dumps(row, sort_keys=True))


def main() -> None:
    """Entry point: run the CLI; our errors and usage errors are one line on stderr and exit status 2."""
    try:
        code = app(standalone_mode=False)
    except OuroError as exc:
        print(f"ouro: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except (typer.Abort, KeyboardInterrupt):
        raise SystemExit(130) from None
    except Exception as exc:
        show = getattr(exc, "show", None)
        if callable(show) and hasattr(exc, "exit_code"):  # click's usage errors (typer ships its own click)
            show()
            raise SystemExit(2) from None
        raise
    raise SystemExit(code if isinstance(code, int) else 0)

"""``ouro publish``, ``worker``, ``beat``, ``flower``, ``triggers``, ``serve`` and ``status``: running the
fleet and looking at it."""

from __future__ import annotations

import json
import os
import signal
import sys
import uuid
from dataclasses import asdict
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ouroboros_gates.ops.cli._common import DOCS, UsageError, event_store
from ouroboros_gates.ops.cli._output import console as output_console
from ouroboros_gates.ops.cli._output import print_json
from ouroboros_gates.schemas.settings import load_settings

if TYPE_CHECKING:
    from pydantic import ValidationError

    from ouroboros_gates.ops.status import FleetStatus
    from ouroboros_gates.ops.triggers import TriggerPlan

__all__ = ["beat", "flower", "publish_cmd", "serve", "status", "triggers", "worker"]

console = output_console()
AsJson = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]


def publish_cmd(
    type_name: Annotated[str, typer.Argument(metavar="TYPE", help="Message type, e.g. Probe.")],
    body: Annotated[str, typer.Argument(metavar="JSON|-", help="The message as JSON, or - for stdin.")],
    queue: Annotated[str | None, typer.Option(help="Override the routed queue.")] = None,
) -> None:
    """Validate a message against its schema and publish it; a missing message_id is generated."""
    from pydantic import ValidationError

    from ouroboros_gates.schemas import MESSAGE_TYPES
    from ouroboros_gates.workers import publish

    cls = MESSAGE_TYPES.get(type_name)
    if cls is None:
        raise UsageError(
            f"TYPE: unknown message type {type_name!r}; known: {', '.join(sorted(MESSAGE_TYPES))}"
        )
    data = _json_object(body)
    data.setdefault("message_id", uuid.uuid4().hex)
    try:
        message = cls.model_validate(data)
    except ValidationError as exc:
        raise UsageError(_first_error(type_name, exc)) from exc
    publish(message, queue=queue)
    console.print(f"published {type_name} {message.message_id} to {message.TASK}")


def _json_object(body: str) -> dict[str, Any]:
    """The message's JSON (``-``: read from stdin); a usage error when it is not a JSON object."""
    text = sys.stdin.read() if body == "-" else body
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"JSON: line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise UsageError("JSON: a message is a JSON object")
    return data


def _first_error(type_name: str, exc: ValidationError) -> str:
    """The first schema error, as ``Type.field.path: why``."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(message)"
    return f"{type_name}.{where}: {first['msg']}"


def worker(
    ctx: typer.Context,
    queues: Annotated[
        str, typer.Option("-Q", "--queues", help="Comma-separated queues (all by default).")
    ] = "",
    hostname: Annotated[
        str | None,
        typer.Option("-n", "--hostname", help="Node name (default <role>@<host>; %h is the host)."),
    ] = None,
    pool: Annotated[
        str | None, typer.Option("-P", "--pool", help="prefork (default), threads, solo.")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option("-c", "--concurrency", min=1, help="Processes (default 2).")
    ] = None,
    autoscale: Annotated[str | None, typer.Option(help="MAX,MIN processes.")] = None,
    max_tasks_per_child: Annotated[int | None, typer.Option("--max-tasks-per-child", min=1)] = None,
    logfile: Annotated[
        str | None, typer.Option("-f", "--logfile", help="Log file, rotated (default stderr).")
    ] = None,
    loglevel: Annotated[str | None, typer.Option("-l", "--loglevel", help="Default OURO_LOG_LEVEL.")] = None,
) -> None:
    """Start a Celery worker on the given queues; any other Celery worker option after these is passed on."""
    from ouroboros_gates.ops.launch import WorkerOptions, queue_names, worker_argv, worker_env

    settings = load_settings()
    names = queue_names(queues)
    options = WorkerOptions(
        queues=",".join(names),
        hostname=hostname,
        pool=pool,
        concurrency=concurrency,
        autoscale=autoscale,
        max_tasks_per_child=max_tasks_per_child,
        logfile=logfile,
        loglevel=loglevel or settings.log_level,
        extra=tuple(ctx.args),
    )
    argv = worker_argv(options)
    os.execve(argv[0], argv, worker_env(names, os.environ))


worker.context_settings = {"allow_extra_args": True, "ignore_unknown_options": True}  # type: ignore[attr-defined]


def beat(
    loglevel: Annotated[str | None, typer.Option("-l", "--loglevel", help="Default OURO_LOG_LEVEL.")] = None,
) -> None:
    """Start Celery beat (the cron triggers)."""
    from ouroboros_gates.ops.launch import beat_argv

    settings = load_settings()
    argv = beat_argv(str(settings.state_dir / "celerybeat-schedule"), loglevel or settings.log_level)
    os.execv(argv[0], argv)


def flower(
    port: Annotated[int, typer.Option()] = 5555,
    address: Annotated[
        str, typer.Option(help="Bind address (0.0.0.0 to expose it beyond this host).")
    ] = "127.0.0.1",
) -> None:
    """Start Flower on the broker, with basic auth from OURO_FLOWER_BASIC_AUTH (refused without it)."""
    from importlib.util import find_spec

    if find_spec("flower") is None:
        raise UsageError("ouro flower needs Flower, an optional part: pip install 'ouroboros-gates[flower]'")
    from celery.bin.celery import main as celery_main

    from ouroboros_gates.ops.launch import flower_argv
    from ouroboros_gates.workers.logs import configure as configure_logging

    settings = load_settings()
    if settings.flower_basic_auth is None:
        raise UsageError("OURO_FLOWER_BASIC_AUTH: set user:password; Flower never runs without auth")
    # The credentials go through the environment, not argv, so `ps` never shows them.
    os.environ["FLOWER_BASIC_AUTH"] = settings.flower_basic_auth
    configure_logging(settings)
    sys.argv = flower_argv(port, address)
    celery_main()


def triggers(
    count: Annotated[int, typer.Option("-n", "--count", min=1, max=50, help="Occurrences per trigger.")] = 3,
    as_json: AsJson = False,
) -> None:
    """The cron triggers: next occurrences, last outcome, and the measurement each cadence was derived
    from."""
    from zoneinfo import ZoneInfo

    from ouroboros_gates.ops.triggers import plan
    from ouroboros_gates.workers.triggers import lock_rows

    settings = load_settings()
    shown = plan(ZoneInfo(settings.timezone), datetime.now(UTC), count, lock_rows(event_store().side_tables))
    if as_json:
        rows = [{**asdict(p), "next": [d.isoformat() for d in p.next]} for p in shown]
        print_json(json.dumps(rows, indent=2, default=str))
        return
    for item in shown:
        _print_trigger(item)
    console.print(f"docs/loop.md, cited above, is installed at {DOCS / 'loop.md'}", markup=False)


def _print_trigger(item: TriggerPlan) -> None:
    """A trigger: its task and cron, its last outcome, its next occurrences and what its cadence came from."""
    last = item.last or {}
    outcome = last.get("last_outcome") or "never fired"
    console.print(
        f"[bold]{escape(item.name)}[/]  {escape(item.task)}  cron '{escape(item.cron)}' ({item.zone})  "
        f"last: {escape(str(outcome))}"
    )
    for moment in item.next:
        console.print(f"  next {moment.isoformat()}")
    console.print(f"  derived from: {item.derived_from}")


def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (default OURO_API_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default OURO_API_PORT).")] = None,
    api_only: Annotated[bool, typer.Option("--api-only", help="Do not start embedded workers.")] = False,
) -> None:
    """Serve the API on 127.0.0.1 with the embedded workers in the background."""
    import uvicorn

    from ouroboros_gates.ops.api.serve import server_options
    from ouroboros_gates.ops.embedded import EmbeddedFleet
    from ouroboros_gates.workers.logs import configure as configure_logging

    settings = load_settings()
    configure_logging(settings)
    bind, bind_port = host or settings.api_host, port or settings.api_port
    console.print(f"ops page on http://{bind}:{bind_port}/  (API under /api, Prometheus metrics at /metrics)")
    # uvicorn stops on SIGTERM, then raises the signal again with the handler it found: this one, so the
    # embedded worker is stopped too (the default handler would end the process and leave it running).
    signal.signal(signal.SIGTERM, _stopped)
    run = partial(
        uvicorn.run,
        **server_options(settings),
        host=bind,
        port=bind_port,
        log_config=None,
        access_log=True,
        log_level=settings.log_level.lower(),
        timeout_graceful_shutdown=int(settings.shutdown_s),
    )
    if api_only:
        run()
        return
    with EmbeddedFleet(settings) as fleet:
        fleet.watch()  # a worker that dies is started again
        console.print(f"workers up; API on http://{bind}:{bind_port}/api/status")
        run()


def _stopped(signum: int, _frame: object) -> None:
    raise SystemExit(0)


def status(as_json: AsJson = False) -> None:
    """Queue depths, messages in flight, dead letters, rejected messages, outbox, projection lag; exit 1 when
    the broker or the event log does not answer."""
    from ouroboros_gates.ops.status import status_at

    snap = status_at(load_settings().event_log_url)
    if as_json:
        print_json(json.dumps({**asdict(snap), "healthy": snap.healthy}, indent=2, default=str))
    else:
        _print_status(snap)
    if not snap.healthy:
        raise typer.Exit(1)


def _print_status(snap: FleetStatus) -> None:
    table = Table(title=f"Event log head {snap.head}")
    table.add_column("what")
    table.add_column("waiting", justify="right")
    table.add_column("in flight", justify="right")
    for name, depth in snap.queues.items():
        held = snap.in_flight.get(name)
        table.add_row(f"queue {name}", _count(depth), _count(held))
    table.add_row("dead letters recorded", str(snap.dead_letters_recorded), "")
    table.add_row("messages rejected", str(snap.rejected), "")
    table.add_row("outbox pending", str(snap.outbox_pending), "")
    for item in snap.projections:
        table.add_row(f"projection {item.name} lag", str(item.lag), "")
    console.print(table)
    _print_unreachable(snap)


def _count(value: int | None) -> str:
    """A count, or ``?`` where the broker did not say."""
    return "?" if value is None else str(value)


def _print_unreachable(snap: FleetStatus) -> None:
    """On stderr, the broker and the event log when they did not answer, with why."""
    for what, error in (("broker", snap.broker_error), ("event log", snap.database_error)):
        if error:
            output_console(stderr=True).print(f"[red]{what} unreachable: {escape(error)}[/]")

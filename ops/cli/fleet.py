"""``ouro publish``, ``worker``, ``beat``, ``flower``, ``triggers``, ``serve`` and ``status``: running the fleet
and looking at it."""

from __future__ import annotations

import json
import os
import sys
import uuid
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ouroboros_gates.ops.cli._common import DOCS, UsageError, event_store
from ouroboros_gates.schemas.settings import load_settings

__all__ = ["beat", "flower", "publish_cmd", "serve", "status", "triggers", "worker"]

console = Console()


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


def worker(
    queues: Annotated[str, typer.Option("-Q", "--queues", help="Comma-separated queues.")] = "",
    concurrency: Annotated[int, typer.Option("-c", "--concurrency")] = 2,
    autoscale: Annotated[str | None, typer.Option(help="MAX,MIN processes.")] = None,
    loglevel: Annotated[str, typer.Option("-l", "--loglevel")] = "INFO",
) -> None:
    """Start a Celery worker on the given queues (all of them by default)."""
    from ouroboros_gates.workers import QUEUES

    names = queues or ",".join(dict.fromkeys(QUEUES.values()))
    role = next((r for r, q in QUEUES.items() if q == names.split(",")[0]), None)
    if role and len(names.split(",")) == 1:
        os.environ.setdefault("OURO_ROLE", role)
    argv = [sys.executable, "-m", "celery", "-A", "ouroboros_gates.workers.app", "worker", "-Q", names, "-l", loglevel]
    argv += ["--autoscale", autoscale] if autoscale else ["-c", str(concurrency)]
    os.execv(sys.executable, argv)


def beat(loglevel: Annotated[str, typer.Option("-l", "--loglevel")] = "INFO") -> None:
    """Start Celery beat (the cron triggers)."""
    state = load_settings().state_dir / "celerybeat-schedule"
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "ouroboros_gates.workers.app",
        "beat",
        "-l",
        loglevel,
        "-s",
        str(state),
    ]
    os.execv(sys.executable, argv)


def flower(
    port: Annotated[int, typer.Option()] = 5555,
    address: Annotated[str, typer.Option(help="Bind address (0.0.0.0 to expose it beyond this host).")] = "127.0.0.1",
) -> None:
    """Start Flower on the broker, with basic auth from OURO_FLOWER_BASIC_AUTH (refused without it)."""
    from importlib.util import find_spec

    if find_spec("flower") is None:
        raise UsageError("ouro flower needs Flower, an optional part: pip install 'ouroboros-gates[flower]'")
    auth = load_settings().flower_basic_auth
    if not auth or ":" not in auth:
        raise UsageError("OURO_FLOWER_BASIC_AUTH: set user:password; Flower never runs without auth")
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "ouroboros_gates.workers.app",
        "flower",
        f"--port={port}",
        f"--address={address}",
    ]
    # The credentials go through the environment, not argv, so `ps` never shows them.
    os.environ["FLOWER_BASIC_AUTH"] = auth
    os.execv(sys.executable, argv)


def triggers(
    count: Annotated[int, typer.Option("-n", "--count", min=1, max=50, help="Occurrences per trigger.")] = 3,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """The cron triggers: next occurrences, last outcome, and the measurement each cadence was derived from."""
    from zoneinfo import ZoneInfo

    from ouroboros_gates.ops.triggers import plan
    from ouroboros_gates.workers.triggers import lock_rows

    settings = load_settings()
    shown = plan(ZoneInfo(settings.timezone), datetime.now(UTC), count, lock_rows(event_store().engine))
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
    console.print(f"docs/loop.md, cited above, is installed at {DOCS / 'loop.md'}", soft_wrap=True)


def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (default OURO_API_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default OURO_API_PORT).")] = None,
    api_only: Annotated[bool, typer.Option("--api-only", help="Do not start embedded workers.")] = False,
) -> None:
    """Serve the API on 127.0.0.1 with the embedded workers in the background."""
    import uvicorn

    from ouroboros_gates.ops.api.serve import server_options
    from ouroboros_gates.ops.embedded import EmbeddedFleet

    settings = load_settings()
    bind, bind_port = host or settings.api_host, port or settings.api_port
    console.print(f"ops page on http://{bind}:{bind_port}/  (API under /api, Prometheus metrics at /metrics)")
    if api_only:
        uvicorn.run(**server_options(settings), host=bind, port=bind_port, log_level="warning")
        return
    with EmbeddedFleet(settings):
        console.print(f"workers up; API on http://{bind}:{bind_port}/api/status")
        uvicorn.run(**server_options(settings), host=bind, port=bind_port, log_level="warning")


def status(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Queue depths, dead letters, rejected messages, outbox, projection lag."""
    from ouroboros_gates.ops.status import fleet_status

    snap = fleet_status(event_store())
    if as_json:
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

"""``ouro ingest``, ``replay``, ``events``, ``db`` and ``schema``: the event log from the command line."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ouroboros_gates.ops.cli._common import UsageError, event_store, instant
from ouroboros_gates.ops.cli._output import console as output_console
from ouroboros_gates.ops.cli._output import print_json
from ouroboros_gates.schemas.settings import load_settings

if TYPE_CHECKING:
    from datetime import datetime

    from ouroboros_gates.events import EventStore, LedgerStore, StoredEvent
    from ouroboros_gates.harness import Unread
    from ouroboros_gates.ops.ingest import SendReport
    from ouroboros_gates.schemas import IngestRun

__all__ = ["db_app", "events_app", "ingest", "replay", "schema"]

console = output_console()
AsJson = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
events_app = typer.Typer(no_args_is_help=True, help="Read the event log.")
db_app = typer.Typer(no_args_is_help=True, help="Schema migrations.")


def ingest(
    items: Annotated[
        list[str], typer.Argument(metavar="PATH...", help="Run directories, files or quoted globs.")
    ],
    as_json: AsJson = False,
) -> None:
    """Queue one IngestRun per run through the event log's outbox and publish it; workers record them."""
    from ouroboros_gates.ops.ingest import expand_runs, ingest_messages, send_runs

    settings = load_settings()
    vanished: list[Path] = []
    unread: list[Unread] = []
    report = send_runs(ingest_messages(expand_runs(items), settings, vanished, unread), settings)
    unsent = len(report.queued) - report.published
    if as_json:
        print_json(json.dumps(_ingest_json(report, vanished, unread, unsent), indent=2))
    else:
        _print_ingested(report, vanished)
    _print_problems(unsent, unread)
    if unread:
        raise typer.Exit(1)


def _print_ingested(report: SendReport, vanished: list[Path]) -> None:
    """The runs skipped (deleted while read), queued now, and queued before."""
    for path in vanished:
        console.print(f"skipped {path}: deleted while it was read", markup=False)
    for message in report.queued:
        console.print(f"queued {message.run} ({message.message_id})", markup=False)
    for message in report.already:
        console.print(f"already queued {message.run} ({message.message_id})", markup=False)


def _print_problems(unsent: int, unread: list[Unread]) -> None:
    """On stderr: the messages left in the outbox, and each file that could not be read."""
    if unsent:
        output_console(stderr=True).print(
            f"[yellow]{unsent} message(s) not published (broker unreachable): kept in the outbox, "
            "published by the outbox sweep (beat) once the broker is back[/]"
        )
    for bad in unread:
        output_console(stderr=True).print(f"ouro: {bad}", markup=False)


def _ingest_json(
    report: SendReport, vanished: list[Path], unread: list[Unread], unsent: int
) -> dict[str, object]:
    def runs(messages: tuple[IngestRun, ...]) -> list[dict[str, str]]:
        return [{"run": m.run, "path": m.path, "message_id": m.message_id} for m in messages]

    return {
        "queued": runs(report.queued),
        "already_queued": runs(report.already),
        "unpublished": unsent,
        "vanished": [str(path) for path in vanished],
        "unread": [{"file": bad.file, "reason": str(bad)} for bad in unread],
    }


def replay(
    rebuild_all: Annotated[
        bool, typer.Option("--rebuild", help="Drop every projection and refold from 0.")
    ] = False,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of", metavar="TIME", help="Rebuild every projection as it stood at TIME (ISO 8601)."
        ),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Catch the projections up with the log (or rebuild them, now or as of a past time) and print the
    digest."""
    from ouroboros_gates.events.projections import PROJECTIONS
    from ouroboros_gates.events.projector import content_digest, digest

    store = event_store()
    moment = instant(as_of) if as_of is not None else None
    applied = _fold(store, moment, rebuild_all)
    content, rows = content_digest(store, PROJECTIONS)
    ledger = digest(store, PROJECTIONS)
    if as_json:
        document = {
            "as_of": moment.isoformat() if moment is not None else None,
            "applied": applied,
            "content_digest": content,
            "rows": rows,
            "ledger_digest": ledger,
        }
        print_json(json.dumps(document, indent=2, sort_keys=True))
        return
    if moment is not None:
        _print_as_of(moment, applied, ledger)
        return
    console.print(f"applied {sum(applied.values())} event(s) over {len(applied)} projection(s)")
    console.print(f"content digest {content} ({rows} rows, log positions and times left out)")
    console.print(f"ledger digest {ledger} (every column: equal after a rebuild)")


def _fold(store: LedgerStore, moment: datetime | None, rebuild_all: bool) -> dict[str, int]:
    """The projections rebuilt as of ``moment``, or rebuilt now (``--rebuild``), or caught up; the events
    each folded."""
    from ouroboros_gates.events.projections import PROJECTIONS
    from ouroboros_gates.events.projector import catch_up, rebuild

    if moment is not None:
        return rebuild(store, PROJECTIONS, until=moment)
    return rebuild(store, PROJECTIONS) if rebuild_all else catch_up(store, PROJECTIONS)


def _print_as_of(moment: datetime, applied: dict[str, int], ledger: str) -> None:
    """What a rebuild as of a past time folded, and that the live tables now show that past."""
    console.print(f"as of {moment.isoformat()}: folded the events recorded at or before it")
    for name, count in applied.items():
        console.print(f"  {name}: {count} event(s)")
    console.print(f"folded {sum(applied.values())} event(s) over {len(applied)} projection(s)")
    console.print(f"ledger digest {ledger}")
    console.print(
        f"[yellow]The live ledger tables now show the past (as of {moment.isoformat()}); events folded "
        "from now on land on top of it. `ouro replay --rebuild` returns them to now.[/]"
    )


def schema(name: Annotated[str | None, typer.Argument(help="A type; omit to list them.")] = None) -> None:
    """Print a contract type's JSON Schema (or list the types)."""
    from ouroboros_gates.schemas import RECORD_TYPES, schema_for

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
    from ouroboros_gates.events import current_revision, ensure_schema, make_engine

    engine = make_engine(load_settings().event_log_url)
    ensure_schema(engine)
    console.print(f"database at revision {current_revision(engine)}")
    engine.dispose()


@db_app.command("current")
def db_current() -> None:
    """Print the database's schema revision and the head (changes nothing)."""
    from ouroboros_gates.events import current_revision, head_revision, make_engine

    engine = make_engine(load_settings().event_log_url)
    current = current_revision(engine)
    engine.dispose()
    where = "at head" if current == head_revision() else f"head is {head_revision()}"
    console.print(f"database at revision {current or 'none (empty)'} ({where})")


@db_app.command("history")
def db_history() -> None:
    """Print every migration, oldest first, marking the database's revision."""
    from ouroboros_gates.events import current_revision, history, make_engine

    engine = make_engine(load_settings().event_log_url)
    current = current_revision(engine)
    engine.dispose()
    for step in history():
        mark = "  <- database" if step.revision == current else ""
        console.print(
            f"{step.down_revision or 'base'} -> {step.revision}  {step.doc.splitlines()[0]}{mark}",
            soft_wrap=True,
        )


@db_app.command("downgrade")
def db_downgrade(
    revision: Annotated[str, typer.Argument(help="The revision to go down to (`base`: an empty schema).")],
) -> None:
    """Undo migrations down to REVISION (what the undone ones created is dropped, rows included)."""
    from ouroboros_gates.events import MigrationError, current_revision, downgrade, make_engine

    engine = make_engine(load_settings().event_log_url)
    try:
        downgrade(engine, revision)
    except MigrationError as exc:
        raise UsageError(f"REVISION: {exc}") from exc
    console.print(f"database at revision {current_revision(engine) or 'none (empty)'}")
    engine.dispose()


@events_app.command("tail")
def events_tail(
    n: Annotated[int, typer.Option("-n", help="How many of the last events.")] = 20,
    follow: Annotated[bool, typer.Option("-f", "--follow")] = False,
) -> None:
    """Print the last events as JSON lines (and follow new ones)."""
    store = event_store()
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
    found = _events_at(event_store(), position, stream)
    if not found:
        raise UsageError(f"no event at {stream or position}")
    for item in found:
        _print_event(item)


def _events_at(store: EventStore, position: int | None, stream: str | None) -> list[StoredEvent]:
    """A whole stream (``--stream``), or the event at POSITION (none when there is none there)."""
    if stream:
        return store.read_stream(stream)
    if position is not None:
        return [e for e in store.read(after=position - 1, limit=1) if e.position == position]
    raise UsageError("give a POSITION or --stream")


def _print_event(item: Any) -> None:
    row = {k: getattr(item, k) for k in ("position", "stream", "version", "type", "payload", "meta")}
    row["recorded_at"] = item.recorded_at.isoformat()
    print(json.dumps(row, sort_keys=True))

"""``ouro measure``: the loop's series from the event log, and ``ouro measure h-fleet`` from run files.

``ouro measure [--at TIME] [--json]`` publishes nothing and appends nothing: it folds the log as it stood
at TIME (default now), prints the latest point of every series, and writes ``<state>/ouroboros.json``.
``ouro measure h-fleet PATH… [--json]`` reads CSF run files directly and prints the same h_fleet as the
seed's jq command, with the runs below the floor ranked; a Claude Code session, which has no result line,
counts as one result of its whole usage. Module-level imports stay light (no SQLAlchemy, Celery or
pydantic): ``h-fleet`` over run files needs none of them (a session's readers load pydantic), and the
event log is imported by ``measure`` alone.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson
import typer

from ouroboros_gates.ops.cli._common import UsageError, instant
from ouroboros_gates.ops.cli._output import Report
from ouroboros_gates.ops.cli._output import console as make_console
from ouroboros_gates.schemas.errors import ConfigurationError, CorpusError

if TYPE_CHECKING:
    from ouroboros_gates.workers.measurer.hfleet import HFleet

__all__ = ["measure_app"]

measure_app = typer.Typer(help="Measure the loop's series (and h_fleet from run files).")
console = make_console()


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigurationError(f"OURO_TIMEZONE: {name!r} is not an IANA time zone") from exc


_QUIET = ("day", "week", "method")


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def _series_table(snapshot: dict[str, Any]) -> Report:
    table = Report(
        f"Ouroboros series as of {snapshot['generated_at']} ({snapshot['timezone']})",
        ("series", "day / week / at", "value", "95% interval", "labels / reason"),
        right=("value", "95% interval"),
    )
    for series, points in snapshot["series"].items():
        for point in points:
            interval = "" if point["low"] is None else f"[{_cell(point['low'])}, {_cell(point['high'])}]"
            table.add(
                series.removeprefix("ouroboros."), _when(point), _cell(point["value"]), interval, _note(point)
            )
    return table


def _when(point: dict[str, Any]) -> str:
    """The day or week a point measures, else the instant it was measured at (to the minute)."""
    labels = point["labels"]
    return str(labels.get("day") or labels.get("week") or point["at"][:16])


def _note(point: dict[str, Any]) -> str:
    """Why a point has no value, else its labels but the day, week and method."""
    return str(
        point["reason"] or ", ".join(f"{k}={v}" for k, v in point["labels"].items() if k not in _QUIET)
    )


def _offender_table(offenders: list[dict[str, Any]], floor: float) -> Report:
    report = Report(
        f"Runs below the h floor {floor} ({len(offenders)}), lowest first",
        ("rank", "run", "h_r", "cache read", "prompt tokens"),
        right=("rank", "h_r", "cache read", "prompt tokens"),
    )
    for row in offenders:
        report.add(
            row["rank"],
            row["run"],
            f"{row['h_r']:.4f}",
            f"{row['cache_read']:.0f}",
            f"{row['prompt_tokens']:.0f}",
        )
    return report


@measure_app.callback(invoke_without_command=True)
def measure(
    ctx: typer.Context,
    at: Annotated[
        str | None, typer.Option("--at", help="ISO time or date (no offset: the configured zone).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the snapshot as JSON.")] = False,
) -> None:
    """Measure every series from the event log as of --at (default now) and write the snapshot."""
    if ctx.invoked_subcommand is not None:
        return
    from ouroboros_gates.events import utcnow
    from ouroboros_gates.ops.cli._common import event_store
    from ouroboros_gates.schemas.settings import load_settings
    from ouroboros_gates.workers.measurer import measure_log, snapshot_path, write_snapshot

    settings = load_settings()
    zone = _zone(settings.timezone)
    store = event_store(settings)
    _, snapshot = measure_log(store, utcnow() if at is None else instant(at, "--at", zone), zone)
    path = snapshot_path(settings)
    wrote = write_snapshot(path, snapshot)
    if as_json:
        sys.stdout.write(
            orjson.dumps(snapshot, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"
        )
        return
    _print_snapshot(snapshot)
    console.print(f"snapshot {'written to' if wrote else 'NOT written (a later one exists):'} {path}")


def _print_snapshot(snapshot: dict[str, Any]) -> None:
    """The series, the runs below the h floor (when any) and the accepted miners per scope."""
    _series_table(snapshot).show(console)
    h = snapshot["h_fleet"]
    if h["offenders"]:
        _offender_table(h["offenders"], h["floor"]).show(console)
    miners = snapshot["accepted_miners"]
    console.print(
        "accepted miners: " + ", ".join(f"{scope} {item['count']}" for scope, item in miners.items())
    )


@measure_app.command(
    "h-fleet",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    options_metavar="[--json] PATH...",
)
def h_fleet(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """h_fleet = Σ cache_read / Σ (input + cache_creation + cache_read) over result envelopes, as jq, and
    Claude Code sessions (each one result: its usage).

    PATH...: run files, run directories, Claude Code projects folders or session files, quoted globs.
    """
    paths = _h_fleet_paths(list(ctx.args))
    from ouroboros_gates.harness.detect import EXPECTED

    result = _read_runs(paths)
    ranked = _ranked_offenders(result)
    if result.malformed:
        print(f"ouro: skipped {result.malformed} malformed line(s)", file=sys.stderr)
    if as_json:
        sys.stdout.write(
            orjson.dumps(_h_fleet_json(result, ranked), option=orjson.OPT_INDENT_2).decode() + "\n"
        )
    else:
        _print_h_fleet(result, ranked)
    sys.stdout.flush()
    for file in result.unread:
        print(f"ouro: {file}: not read: no object in a known format; expected {EXPECTED}", file=sys.stderr)
    if result.unread:
        raise typer.Exit(1)


def _read_runs(paths: list[str]) -> HFleet:
    """The runs every reader sees (run directories, files, a Claude Code session with its subagents), read
    for h_fleet; an unreadable file is a corpus error naming it."""
    from ouroboros_gates.harness.paths import expand
    from ouroboros_gates.workers.measurer.hfleet import read_h_fleet_runs

    try:
        return read_h_fleet_runs([(run.name, run.files) for run in expand(paths)])
    except OSError as exc:
        raise CorpusError(f"{exc.filename}: cannot read: {exc.strerror}") from exc


def _h_fleet_paths(paths: list[str]) -> list[str]:
    """The paths as given on the command line: at least one, and no option among them. (Taken as given:
    typer would pass a typed argument through pydantic, whose import costs more than reading 20 MB of
    runs.)"""
    if not paths:
        raise UsageError("PATH: give at least one run file, run directory or quoted glob")
    unknown = [arg for arg in paths if arg.startswith("-")]
    if unknown:
        raise UsageError(f"{unknown[0]}: no such option (h-fleet takes --json and PATH...)")
    return paths


def _ranked_offenders(result: HFleet) -> list[dict[str, Any]]:
    """The runs below the floor, lowest first, numbered from 1."""
    from ouroboros_gates.workers.measurer.hfleet import offenders

    return [
        {"rank": rank, "run": r.run, "h_r": r.h, "cache_read": r.cache_read, "prompt_tokens": r.prompt_tokens}
        for rank, r in enumerate(offenders(result.runs), start=1)
    ]


def _print_h_fleet(result: HFleet, ranked: list[dict[str, Any]]) -> None:
    """h_fleet, the offenders' table and the notes, as text."""
    from ouroboros_gates.workers.measurer.hfleet import FLOOR

    shown = "- (no prompt tokens)" if result.value is None else repr(result.value)
    console.print(f"h_fleet {shown} over {len(result.runs)} run(s), {result.results} result(s)")
    _offender_table(ranked, FLOOR).show(console)
    for note in result.notes:
        console.print(f"note: {note}", markup=False)


def _h_fleet_json(result: HFleet, ranked: list[dict[str, Any]]) -> dict[str, Any]:
    from ouroboros_gates.workers.measurer.hfleet import FLOOR

    per_run = [
        {"run": r.run, "h_r": r.h, "cache_read": r.cache_read, "prompt_tokens": r.prompt_tokens}
        for r in result.runs
    ]
    return {
        "h_fleet": result.value,
        "floor": FLOOR,
        "runs": len(result.runs),
        "lines": result.lines,
        "results": result.results,
        "malformed": result.malformed,
        "offenders": ranked,
        "per_run": per_run,
        "notes": list(result.notes),
        "unread": list(result.unread),
    }

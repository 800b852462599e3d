"""``ouro measure``: the loop's series from the event log, and ``ouro measure h-fleet`` from run files.

``ouro measure [--at TIME] [--json]`` publishes nothing and appends nothing: it folds the log as it stood
at TIME (default now), prints the latest point of every series, and writes ``<state>/ouroboros.json``.
``ouro measure h-fleet PATH… [--json]`` reads CSF run files directly and prints the same h_fleet as the
seed's jq command, with the runs below the floor ranked. Module-level imports stay light (no SQLAlchemy,
Celery or pydantic): ``h-fleet`` needs none of them, and the event log is imported by ``measure`` alone.
"""

from __future__ import annotations

import glob
import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson
import typer
from rich.console import Console
from rich.table import Table

from events.errors import ConfigurationError, CorpusError, OuroError

__all__ = ["expand_paths", "measure_app", "parse_at"]

measure_app = typer.Typer(help="Measure the loop's series (and h_fleet from run files).")
console = Console()


class MeasureUsageError(OuroError):
    """An argument of ``ouro measure`` is wrong."""


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigurationError(f"OURO_TIMEZONE: {name!r} is not an IANA time zone") from exc


def parse_at(text: str | None, zone: ZoneInfo) -> datetime:
    """An ISO 8601 instant or date; one without an offset is read in ``zone``; None is now."""
    if text is None:
        from events import utcnow

        return utcnow()
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise MeasureUsageError(f"--at: {text!r} is not an ISO 8601 time (e.g. 2026-10-05T09:00-07:00)") from exc
    return (moment if moment.tzinfo else moment.replace(tzinfo=zone)).astimezone(ZoneInfo("UTC"))


def expand_paths(items: list[str]) -> list[Path]:
    """Run files from files, run directories, directories of runs and quoted globs, in the order given."""
    found: list[Path] = []
    for item in items:
        matches = sorted(glob.glob(item)) if any(ch in item for ch in "*?[") else [item]
        if not matches:
            raise CorpusError(f"{item}: matches nothing")
        for match in map(Path, matches):
            if match.is_dir():
                nested = [match / "events.jsonl"] if (match / "events.jsonl").is_file() else []
                nested = nested or sorted(match.glob("*/events.jsonl"))
                if not nested:
                    raise CorpusError(f"{match}: not a run (no events.jsonl)")
                found.extend(nested)
            else:
                found.append(match)
    return found


_QUIET = ("day", "week", "method")


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def _series_table(snapshot: dict[str, Any]) -> Table:
    table = Table(title=f"Ouroboros series as of {snapshot['generated_at']} ({snapshot['timezone']})")
    table.add_column("series", no_wrap=True)
    table.add_column("day / week / at", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("95% interval", justify="right")
    table.add_column("labels / reason")
    for series, points in snapshot["series"].items():
        for point in points:
            labels = point["labels"]
            when = labels.get("day") or labels.get("week") or point["at"][:16]
            interval = "" if point["low"] is None else f"[{_cell(point['low'])}, {_cell(point['high'])}]"
            note = point["reason"] or ", ".join(f"{k}={v}" for k, v in labels.items() if k not in _QUIET)
            table.add_row(series.removeprefix("ouroboros."), when, _cell(point["value"]), interval, note)
    return table


def _offender_table(offenders: list[dict[str, Any]], floor: float) -> Table:
    table = Table(title=f"Runs below the h floor {floor} ({len(offenders)}), lowest first")
    for name in ("rank", "run", "h_r", "cache read", "prompt tokens"):
        table.add_column(name, justify="left" if name == "run" else "right")
    for row in offenders:
        table.add_row(str(row["rank"]), row["run"], f"{row['h_r']:.4f}", f"{row['cache_read']:,.0f}",
                      f"{row['prompt_tokens']:,.0f}")  # fmt: skip
    return table


@measure_app.callback(invoke_without_command=True)
def measure(
    ctx: typer.Context,
    at: Annotated[str | None, typer.Option("--at", help="ISO time or date (no offset: the configured zone).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the snapshot as JSON.")] = False,
) -> None:
    """Measure every series from the event log as of --at (default now) and write the snapshot."""
    if ctx.invoked_subcommand is not None:
        return
    from events import load_settings, open_store
    from workers.measurer import measure_log, snapshot_path, write_snapshot

    settings = load_settings()
    zone = _zone(settings.timezone)
    store = open_store(settings.event_log_url)
    _, snapshot = measure_log(store, parse_at(at, zone), zone)
    path = snapshot_path(settings)
    wrote = write_snapshot(path, snapshot)
    if as_json:
        sys.stdout.write(orjson.dumps(snapshot, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n")
        return
    console.print(_series_table(snapshot))
    h = snapshot["h_fleet"]
    if h["offenders"]:
        console.print(_offender_table(h["offenders"], h["floor"]))
    miners = snapshot["accepted_miners"]
    console.print("accepted miners: " + ", ".join(f"{scope} {item['count']}" for scope, item in miners.items()))
    console.print(f"snapshot {'written to' if wrote else 'NOT written (a later one exists):'} {path}")


@measure_app.command(
    "h-fleet",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    options_metavar="[--json] PATH...",
)
def h_fleet(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """h_fleet = Σ cache_read / Σ (input + cache_creation + cache_read) over result envelopes, as jq.

    PATH...: run files, run directories, directories of runs or quoted globs.
    """
    # The paths are taken from the command line as given: typer would pass a typed argument through
    # pydantic, whose import costs more than reading 20 MB of runs.
    paths = list(ctx.args)
    if not paths:
        raise MeasureUsageError("PATH: give at least one run file, run directory or quoted glob")
    unknown = [arg for arg in paths if arg.startswith("-")]
    if unknown:
        raise MeasureUsageError(f"{unknown[0]}: no such option (h-fleet takes --json and PATH...)")
    from workers.measurer import FLOOR, offenders, read_h_fleet

    files = expand_paths(paths)
    try:
        result = read_h_fleet(files)
    except OSError as exc:
        raise CorpusError(f"{exc.filename}: cannot read: {exc.strerror}") from exc
    ranked = [
        {"rank": rank, "run": r.run, "h_r": r.h, "cache_read": r.cache_read, "prompt_tokens": r.prompt_tokens}
        for rank, r in enumerate(offenders(result.runs), start=1)
    ]
    if result.malformed:
        print(f"ouro: skipped {result.malformed} malformed line(s)", file=sys.stderr)
    if as_json:
        doc = {"h_fleet": result.value, "floor": FLOOR, "runs": len(result.runs), "lines": result.lines,
               "results": result.results, "malformed": result.malformed, "offenders": ranked}  # fmt: skip
        sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    shown = "- (no prompt tokens)" if result.value is None else repr(result.value)
    console.print(f"h_fleet {shown} over {len(result.runs)} run(s), {result.results} result line(s)")
    console.print(_offender_table(ranked, FLOOR))

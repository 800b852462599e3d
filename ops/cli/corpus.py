"""``ouro corpus``: look at harness logs without the fleet (no broker, no event log).

    ouro corpus stats PATH… [--json]        lines, sessions, tool calls and struggles, usage, cost, h_r per
    run
    ouro corpus sessions PATH… [--json]     each run's start, end, agent and counts (what labels.tsv needs)

PATH is a harness log file of any format (CSF envelope, stream-json, a Claude Code transcript, hook
payloads, a SWE-agent trajectory, OpenHands events), a run directory, a directory of runs, Claude Code's
``~/.claude/projects`` (or one project folder or session folder: one run per session, named by its
``sessionId``, read with its subagents; one transcript file: that file alone), or a quoted glob. Formats are
detected per file and per line. A file holding nothing in a known format is named on stderr with what it
held and what was expected, and the exit status is then 1 (the rest is still reported). Errors are
``CorpusError``s, which ``ouro`` prints as one line with exit status 2. Piped, tables are tab-separated lines
(every value whole); ``--json`` prints the stable document.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ouroboros_gates.harness import TOOL_ERROR_DEFINITION, AgentStats, CorpusStats, RunStats, collect
from ouroboros_gates.ops.cli._output import Report, console, print_json

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True, help="Read harness logs: Claude Code's, SWE-agent's, OpenHands'.")
out = console()
err = console(stderr=True)

_SHOWN_MALFORMED = 20
Paths = Annotated[
    list[str],
    typer.Argument(metavar="PATH...", help="Files, run directories, directories of runs, quoted globs."),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print stable JSON instead of tables.")]


@app.callback()
def corpus() -> None:
    """Read harness logs: CSF envelopes, stream-json, transcripts, hook payloads, SWE-agent, OpenHands."""
    # A callback keeps each verb a subcommand.


@app.command()
def stats(paths: Paths, as_json: AsJson = False) -> None:
    """Per run, per agent and in total: lines, malformed lines, sessions, tool calls and struggles, usage,
    cost."""
    found = collect(paths)
    if as_json:
        print_json(json.dumps(found.to_json(), indent=2, sort_keys=True))
    else:
        _print_runs(found)
        _print_tools(found.total)
        _print_gates(found.total)
        _print_malformed(found.total)
        out.print(f"[dim]struggle (tool error): {TOOL_ERROR_DEFINITION}.[/]")
    _exit_on_unread(found)


@app.command()
def sessions(paths: Paths, as_json: AsJson = False) -> None:
    """Each run with its first and last timestamp, agent and counts: the instance, start and source of
    labels.tsv."""
    found = collect(paths)
    rows = [_session_row(run) for run in found.runs]
    if as_json:
        print_json(json.dumps(rows, indent=2))
    else:
        _sessions_report(rows).show(out)
    _exit_on_unread(found)


def _sessions_report(rows: list[dict[str, object]]) -> Report:
    """One line per run (``-`` for what it does not know)."""
    report = Report(
        "Runs",
        ("run", "start", "end", "seconds", "agent", "tool calls", "tool errors", "path"),
        right=("seconds", "tool calls", "tool errors"),
    )
    for row in rows:
        report.add(*("-" if value is None else value for value in row.values()))
    return report


def _session_row(run: RunStats) -> dict[str, object]:
    shown = run.to_json()
    start, end = shown["started_at"], shown["ended_at"]
    seconds = (run.ended_at - run.started_at).total_seconds() if run.started_at and run.ended_at else None
    return {
        "run": run.run,
        "start": start,
        "end": end,
        "seconds": seconds,
        "agent": run.agent,
        "tool_calls": sum(run.tool_calls.values()),
        "tool_errors": sum(run.tool_errors.values()),
        "path": run.path,
    }


def _exit_on_unread(found: CorpusStats) -> None:
    """Name on stderr each file deleted before it was read (a counted skip) and each file no reader could
    read; exit 1 when there is one of the latter."""
    out.file.flush()  # the report first, then what it left out
    _print_vanished(found.vanished)
    for bad in found.unread:
        err.print(f"ouro: {bad}", markup=False)
    if found.unread:
        raise typer.Exit(1)


def _print_vanished(vanished: list[str]) -> None:
    """On stderr, each file deleted before it was read, and how many."""
    for gone in vanished:
        err.print(f"ouro: skipped {gone}: deleted while the corpus was read", markup=False)
    if vanished:
        err.print(f"ouro: {len(vanished)} file(s) skipped: they vanished", markup=False)


def _print_runs(found: CorpusStats) -> None:
    counts = ("lines", "malformed", "sessions", "tool calls", "tool errors")
    usage = ("input", "cache write", "cache read", "output", "h_r", "cost USD")
    report = Report("Harness logs", ("run", "agent", "format", *counts, *usage), right=(*counts, *usage))
    for run in [*found.runs, found.total]:
        if run is found.total:
            report.section()
        report.add(*_row(run))
        _add_agents(report, run)
    report.show(out)
    _print_notes(found.total)


def _add_agents(report: Report, run: RunStats) -> None:
    """A line per agent, under a run with several (or whose relayed subagent events were skipped)."""
    if len(run.agents) > 1 or run.relays_skipped:
        for name, agent in run.agents.items():
            report.add(*_agent_row(name, agent), style="dim")


def _print_notes(total: RunStats) -> None:
    """The readers' notes, and how many relayed subagent events were skipped."""
    for note in total.notes:
        out.print(f"[yellow]note:[/] {note}", highlight=False)
    if total.relays_skipped:
        out.print(
            f"[dim]{total.relays_skipped} relayed subagent event(s) skipped: their own transcripts "
            "count them.[/]"
        )


def _agent_row(name: str, agent: AgentStats) -> tuple[str, ...]:
    usage = agent.usage
    counts = (agent.tool_calls, agent.tool_errors, usage.input_tokens, usage.cache_creation_input_tokens)
    return (
        f"  agent {name}",
        "",
        "",
        "",
        "",
        "",
        *(str(n) for n in counts),
        str(usage.cache_read_input_tokens),
        str(usage.output_tokens),
        "",
        "",
    )


def _row(run: RunStats) -> tuple[str, ...]:
    usage = run.usage
    cost = "-" if run.cost_usd is None else f"{run.cost_usd:.4f}"
    return (
        run.run,
        run.agent,
        run.format,
        str(run.lines),
        str(run.malformed_count),
        str(len(run.sessions)),
        str(sum(run.tool_calls.values())),
        str(sum(run.tool_errors.values())),
        str(usage.input_tokens),
        str(usage.cache_creation_input_tokens),
        str(usage.cache_read_input_tokens),
        str(usage.output_tokens),
        "-" if run.cache is None else f"{run.cache:.4f}",
        cost,
    )


def _print_tools(total: RunStats) -> None:
    if not total.tool_calls and not total.tool_errors:
        return
    report = Report("Tool calls by tool", ("tool", "calls", "errors"), right=("calls", "errors"))
    for tool in sorted(set(total.tool_calls) | set(total.tool_errors)):
        report.add(tool, total.tool_calls.get(tool, 0), total.tool_errors.get(tool, 0))
    report.show(out)


def _print_gates(total: RunStats) -> None:
    if not total.tool_errors_by_gate:
        return
    report = Report(
        "Struggles a gate's denial accounts for", ("gate", "denied calls"), right=("denied calls",)
    )
    for gate, denied in total.tool_errors_by_gate.items():
        report.add(gate, denied)
    report.show(out)


def _print_malformed(total: RunStats) -> None:
    if not total.malformed_count:
        return
    out.print(f"[yellow]{total.malformed_count} malformed line(s), skipped:[/]")
    for bad in total.malformed[:_SHOWN_MALFORMED]:
        out.print(f"  {bad}", markup=False, highlight=False)
    if total.malformed_count > _SHOWN_MALFORMED:
        out.print(f"  … and {total.malformed_count - _SHOWN_MALFORMED} more (--json lists them)")

"""``ouro corpus``: look at harness logs without the fleet (no broker, no event log).

    ouro corpus stats PATH… [--json]

PATH is a harness log file of any format (CSF envelope, stream-json, a Claude Code transcript, hook
payloads), a run directory, a directory of runs, Claude Code's ``~/.claude/projects`` (or one project
folder, session file or session folder: one run per session, named by its ``sessionId``, read with its
subagents), or a quoted glob. Formats are detected per file and per line. Each run's tool calls, errors
and usage are shown per agent too (``main`` and each subagent). Errors are ``CorpusError``s, which
``ouro`` prints as one line with exit status 2.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ouroboros_gates.harness import TOOL_ERROR_DEFINITION, AgentStats, CorpusStats, RunStats, collect

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True, help="Read harness logs: CSF envelopes, stream-json, transcripts, hooks.")
console = Console()

_SHOWN_MALFORMED = 20


@app.callback()
def corpus() -> None:
    """Read harness logs: CSF envelopes, stream-json, transcripts, hook payloads (formats detected)."""
    # A callback keeps ``stats`` a subcommand even while it is the only one.


@app.command()
def stats(
    paths: Annotated[
        list[str], typer.Argument(metavar="PATH...", help="Files, run directories, directories of runs, quoted globs.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print stable JSON instead of tables.")] = False,
) -> None:
    """Per run, per agent and in total: lines, malformed lines, sessions, tool calls and errors, usage, cost."""
    found = collect(paths)
    if as_json:
        print(json.dumps(found.to_json(), indent=2, sort_keys=True))
        return
    _print_runs(found)
    _print_tools(found.total)
    _print_malformed(found.total)
    console.print(f"[dim]tool error: {TOOL_ERROR_DEFINITION}.[/]")


def _print_runs(found: CorpusStats) -> None:
    table = Table(title="Harness logs")
    counts = ("lines", "malformed", "sessions", "tool calls", "tool errors")
    for name in ("run", "format", *counts, "input", "cache write", "cache read", "output", "cost USD"):
        table.add_column(name, justify="left" if name in ("run", "format") else "right")
    for run in [*found.runs, found.total]:
        if run is found.total:
            table.add_section()
        table.add_row(*_row(run))
        if len(run.agents) > 1 or run.relays_skipped:
            for name, agent in run.agents.items():
                table.add_row(*_agent_row(name, agent), style="dim")
    console.print(table)
    for note in found.total.notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False)
    if found.total.relays_skipped:
        console.print(
            f"[dim]{found.total.relays_skipped} relayed subagent event(s) skipped: their own transcripts count them.[/]"
        )


def _agent_row(name: str, agent: AgentStats) -> tuple[str, ...]:
    usage = agent.usage
    counts = (agent.tool_calls, agent.tool_errors, usage.input_tokens, usage.cache_creation_input_tokens)
    return (f"  agent {name}", "", "", "", "", *(str(n) for n in counts), str(usage.cache_read_input_tokens),
            str(usage.output_tokens), "")  # fmt: skip


def _row(run: RunStats) -> tuple[str, ...]:
    usage = run.usage
    cost = "-" if run.cost_usd is None else f"{run.cost_usd:.4f}"
    return (
        run.run,
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
        cost,
    )


def _print_tools(total: RunStats) -> None:
    if not total.tool_calls and not total.tool_errors:
        return
    table = Table(title="Tool calls by tool")
    for name in ("tool", "calls", "errors"):
        table.add_column(name, justify="left" if name == "tool" else "right")
    for tool in sorted(set(total.tool_calls) | set(total.tool_errors)):
        table.add_row(tool, str(total.tool_calls.get(tool, 0)), str(total.tool_errors.get(tool, 0)))
    console.print(table)


def _print_malformed(total: RunStats) -> None:
    if not total.malformed_count:
        return
    console.print(f"[yellow]{total.malformed_count} malformed line(s), skipped:[/]")
    for bad in total.malformed[:_SHOWN_MALFORMED]:
        console.print(f"  {bad}", markup=False, highlight=False)
    if total.malformed_count > _SHOWN_MALFORMED:
        console.print(f"  … and {total.malformed_count - _SHOWN_MALFORMED} more (--json lists them)")

"""The table of ``ouro``'s commands (name, module, attribute, help line) and the root help made from it:
what ``ouro --help`` prints without loading any command-line library (``ops.cli._root`` prints the same)."""

from __future__ import annotations

import os
import sys
from typing import NamedTuple

__all__ = ["COMMANDS", "ROOT_HELP", "Entry", "usage"]

ROOT_HELP = "Ouroboros: gates from agents' mistakes."


class Entry(NamedTuple):
    """One command of ``ouro``: its module, the attribute there (a function or a Typer group), its help
    line."""

    module: str
    attribute: str
    help: str


COMMANDS: dict[str, Entry] = {
    "loop": Entry(
        "ouroboros_gates.ops.cli.loop",
        "loop",
        "Run the whole loop once on the embedded default over CORPUS and print the summary.",
    ),
    "ingest": Entry(
        "ouroboros_gates.ops.cli.log",
        "ingest",
        "Queue one IngestRun per run through the event log's outbox and publish it; workers record them.",
    ),
    "hook": Entry(
        "ouroboros_gates.ops.cli.hooks",
        "hook",
        "Claude Code's hook: the payload on stdin; records it, spools it, decides PreToolUse (see "
        "ops/hook.py).",
    ),
    "hooks": Entry(
        "ouroboros_gates.ops.cli.hooks", "hooks_app", "Claude Code and git hooks; the gate cache and server."
    ),
    "publish": Entry(
        "ouroboros_gates.ops.cli.fleet",
        "publish_cmd",
        "Validate a message against its schema and publish it; a missing message_id is generated.",
    ),
    "worker": Entry(
        "ouroboros_gates.ops.cli.fleet",
        "worker",
        "Start a Celery worker on the given queues; any other Celery worker option after these is passed on.",
    ),
    "beat": Entry("ouroboros_gates.ops.cli.fleet", "beat", "Start Celery beat (the cron triggers)."),
    "flower": Entry(
        "ouroboros_gates.ops.cli.fleet",
        "flower",
        "Start Flower on the broker, with basic auth from OURO_FLOWER_BASIC_AUTH (refused without it).",
    ),
    "triggers": Entry(
        "ouroboros_gates.ops.cli.fleet",
        "triggers",
        "The cron triggers: next occurrences, last outcome, and the measurement each cadence was derived "
        "from.",
    ),
    "serve": Entry(
        "ouroboros_gates.ops.cli.fleet",
        "serve",
        "Serve the API on 127.0.0.1 with the embedded workers in the background.",
    ),
    "status": Entry(
        "ouroboros_gates.ops.cli.fleet",
        "status",
        "Queue depths, messages in flight, dead letters, rejected messages, outbox, projection lag; exit 1 "
        "when the "
        "broker or the event log does not answer.",
    ),
    "replay": Entry(
        "ouroboros_gates.ops.cli.log",
        "replay",
        "Catch the projections up with the log (or rebuild them, now or as of a past time) and print the "
        "digest.",
    ),
    "events": Entry("ouroboros_gates.ops.cli.log", "events_app", "Read the event log."),
    "db": Entry("ouroboros_gates.ops.cli.log", "db_app", "Schema migrations."),
    "schema": Entry(
        "ouroboros_gates.ops.cli.log", "schema", "Print a contract type's JSON Schema (or list the types)."
    ),
    "corpus": Entry(
        "ouroboros_gates.ops.cli.corpus", "app", "Read harness logs: Claude Code's, SWE-agent's, OpenHands'."
    ),
    "measure": Entry(
        "ouroboros_gates.ops.cli.measure",
        "measure_app",
        "Measure the loop's series (and h_fleet from run files).",
    ),
    "miner": Entry(
        "ouroboros_gates.ops.cli.miner",
        "miner_app",
        "Miners: list, new, test, and `ouro miner NAME facts|findings|backtest|mutate|scope …`.",
    ),
    "datalog": Entry(
        "ouroboros_gates.ops.cli.datalog",
        "datalog_app",
        "The Datalog engine: check a rules file, run it over facts.",
    ),
    "learn": Entry(
        "ouroboros_gates.ops.cli.learn", "learn_app", "Labels, memory, evaluation, compile and curves."
    ),
    "experiment": Entry(
        "ouroboros_gates.ops.cli.experiment", "experiment_app", "Pre-registered paired experiments."
    ),
    "precheck": Entry(
        "ouroboros_gates.ops.cli.precheck",
        "precheck_cmd",
        "Pre-check the latest proposal of each ticket (every open mining ticket by default): no model call.",
    ),
    "propose": Entry(
        "ouroboros_gates.ops.cli.precheck",
        "propose_cmd",
        "Ask the model for a proposal per open mining ticket (one call per batch) and post each as the "
        "ticket's"
        " proposal comment; --census counts the proposals an existing extractor reaches TP > 0 with; "
        "--costs prints"
        " the cost row of every call recorded, and their sums.",
    ),
    "label": Entry(
        "ouroboros_gates.ops.cli.label",
        "label",
        "Label tickets with the local model: prefilter, label in batches, accept only what reproduces.",
    ),
    "scan": Entry(
        "ouroboros_gates.ops.cli.decider",
        "scan",
        "Decide every candidate of the files under PATH… and write the reports (findings.json, SARIF, ...).",
    ),
    "pre-push": Entry(
        "ouroboros_gates.ops.cli.decider",
        "pre_push",
        "git's pre-push hook: decide the pushed refs (git's stdin, or pre-commit's PRE_COMMIT_* variables).",
    ),
    "dismiss": Entry(
        "ouroboros_gates.ops.cli.decider",
        "dismiss",
        "Dismiss a finding: kept in your repository (OURO_DECIDER_ADAPT=1 reads it), never in the store.",
    ),
    "close-ticket": Entry(
        "ouroboros_gates.ops.cli.loop",
        "close_ticket_cmd",
        "Close TICKET only when PR is merged, its body has | Backtest FN | 0 | and every check row exited 0.",
    ),
    "train": Entry(
        "ouroboros_gates.ops.cli.loop",
        "train_cmd",
        "Run the merge train once over the configured forge (in this process) and print what it did.",
    ),
    "fix": Entry(
        "ouroboros_gates.ops.cli.loop",
        "fix_cmd",
        "Launch one fixer session per ticket whose latest pre-check verdict is launch, under the daily cap.",
    ),
}
"""Every command, in the order ``ouro --help`` lists them; a test holds each help line to the command's
own."""


def usage(width: int | None = None) -> str:
    """The root help: the usage line, what ``ouro`` is, and every command with its whole help line, wrapped to
    ``width`` (the terminal's, at most 100 columns)."""
    from textwrap import wrap

    width = max(60, min(width or _terminal_columns(), 100))
    column = max(map(len, COMMANDS)) + 4
    lines = [
        "Usage: ouro [OPTIONS] COMMAND [ARGS]...",
        "",
        f"  {ROOT_HELP}",
        "",
        "Options:",
        "  -V, --version         Show the version and the shipped program and memory digests, and exit.",
        "  --install-completion  Install completion for the current shell.",
        "  --show-completion     Show completion for the current shell, to copy it or customize it.",
        "  --help                Show this message and exit.",
        "",
        "Commands:",
    ]
    for name, entry in COMMANDS.items():
        wrapped = wrap(entry.help, width - column) or [""]
        lines.append(f"  {name:<{column - 2}}{wrapped[0]}")
        lines.extend(" " * column + rest for rest in wrapped[1:])
    return "\n".join(lines) + "\n"


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing ``shutil`` (about 15 ms of the help's 40)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        return int(columns)
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (AttributeError, OSError, ValueError):  # not a terminal
        return 80

"""``ouro``: the command line of the fleet. Every error is one clear line and exit status 2.

The root group knows each command by name, where it lives and its one-line help; a command's module is
imported only when that command runs (``ouro --help`` imports none of them), so a command pays for what it
uses and nothing else: ``measure h-fleet`` and ``corpus stats`` load no SQLAlchemy, Celery or event store.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib import import_module

import typer
from typer import _click as click
from typer.core import TyperGroup

__all__ = ["COMMANDS", "Entry", "app", "main"]


@dataclass(frozen=True)
class Entry:
    """One command of ``ouro``: its module, the attribute there (a function or a Typer group), its help line."""

    module: str
    attribute: str
    help: str


COMMANDS: dict[str, Entry] = {
    "loop": Entry(
        "ops.cli.loop", "loop", "Run the whole loop once on the embedded default over CORPUS and print the summary."
    ),
    "ingest": Entry(
        "ops.cli.log",
        "ingest",
        "Queue one IngestRun per run through the event log's outbox and publish it; workers record them.",
    ),
    "hook": Entry(
        "ops.cli.hooks",
        "hook",
        "Claude Code's hook: the payload on stdin; records it, spools it, decides PreToolUse (see ops/hook.py).",
    ),
    "hooks": Entry("ops.cli.hooks", "hooks_app", "Claude Code and git hooks; the gate cache and server."),
    "publish": Entry(
        "ops.cli.fleet",
        "publish_cmd",
        "Validate a message against its schema and publish it; a missing message_id is generated.",
    ),
    "worker": Entry("ops.cli.fleet", "worker", "Start a Celery worker on the given queues (all of them by default)."),
    "beat": Entry("ops.cli.fleet", "beat", "Start Celery beat (the cron triggers)."),
    "flower": Entry(
        "ops.cli.fleet",
        "flower",
        "Start Flower on the broker, with basic auth from OURO_FLOWER_BASIC_AUTH (refused without it).",
    ),
    "triggers": Entry(
        "ops.cli.fleet",
        "triggers",
        "The cron triggers: next occurrences, last outcome, and the measurement each cadence was derived from.",
    ),
    "serve": Entry("ops.cli.fleet", "serve", "Serve the API on 127.0.0.1 with the embedded workers in the background."),
    "status": Entry(
        "ops.cli.fleet", "status", "Queue depths, dead letters, rejected messages, outbox, projection lag."
    ),
    "replay": Entry(
        "ops.cli.log",
        "replay",
        "Catch the projections up with the log (or rebuild them, now or as of a past time) and print the digest.",
    ),
    "events": Entry("ops.cli.log", "events_app", "Read the event log."),
    "db": Entry("ops.cli.log", "db_app", "Schema migrations."),
    "schema": Entry("ops.cli.log", "schema", "Print a contract type's JSON Schema (or list the types)."),
    "corpus": Entry("ops.cli.corpus", "app", "Read harness logs: CSF envelopes, stream-json, transcripts, hooks."),
    "measure": Entry("ops.cli.measure", "measure_app", "Measure the loop's series (and h_fleet from run files)."),
    "miner": Entry(
        "ops.cli.miner",
        "miner_app",
        "Miners: list, new, test, and `ouro miner NAME facts|findings|backtest|mutate|scope …`.",
    ),
    "datalog": Entry("ops.cli.miner", "datalog_app", "The Datalog engine: check a rules file, run it over facts."),
    "learn": Entry("ops.cli.learn", "learn_app", "Labels, memory, evaluation, compile and curves."),
    "experiment": Entry("ops.cli.experiment", "experiment_app", "Pre-registered paired experiments."),
    "precheck": Entry(
        "ops.cli.precheck",
        "precheck_cmd",
        "Pre-check the latest proposal of each ticket (every open mining ticket by default): no model call.",
    ),
    "propose": Entry(
        "ops.cli.precheck",
        "propose_cmd",
        "Ask the model for a proposal per open mining ticket (one call per batch) and post each as the ticket's"
        " proposal comment; --census counts the proposals an existing extractor reaches TP > 0 with; --costs prints"
        " the cost row of every call recorded, and their sums.",
    ),
    "label": Entry(
        "ops.cli.label",
        "label",
        "Label tickets with the local model: prefilter, label in batches, accept only what reproduces.",
    ),
    "scan": Entry(
        "ops.cli.decider",
        "scan",
        "Decide every candidate of the files under PATH… and write the reports (findings.json, SARIF, ...).",
    ),
    "pre-push": Entry(
        "ops.cli.decider",
        "pre_push",
        "git's pre-push hook: decide the pushed refs (stdin lines) through the decider worker.",
    ),
    "dismiss": Entry(
        "ops.cli.decider",
        "dismiss",
        "Dismiss a finding: kept in your repository (OURO_DECIDER_ADAPT=1 reads it), never in the store.",
    ),
    "close-ticket": Entry(
        "ops.cli.loop",
        "close_ticket_cmd",
        "Close TICKET only when PR is merged, its body has | Backtest FN | 0 | and every check row exited 0.",
    ),
    "train": Entry(
        "ops.cli.loop",
        "train_cmd",
        "Run the merge train once over the configured forge (in this process) and print what it did.",
    ),
    "fix": Entry(
        "ops.cli.loop",
        "fix_cmd",
        "Launch one fixer session per ticket whose latest pre-check verdict is launch, under the daily cap.",
    ),
}
"""Every command, in the order ``ouro --help`` lists them; a test holds each help line to the command's own."""


def load(name: str) -> click.Command:
    """The click command ``name`` stands for, its module imported now."""
    entry = COMMANDS[name]
    found = getattr(import_module(entry.module), entry.attribute)
    if isinstance(found, typer.Typer):
        command: click.Command = typer.main.get_group(found)
    else:
        single = typer.Typer(add_completion=False)
        single.command(name)(found)
        command = typer.main.get_command(single)
    command.name = name
    return command


class LazyGroup(TyperGroup):
    """The root group: lists the commands from ``COMMANDS`` and imports one only when it runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load(cmd_name) if cmd_name in COMMANDS else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        limit = formatter.width - 6 - max(map(len, COMMANDS))
        rows = [(name, click.utils.make_default_short_help(entry.help, limit)) for name, entry in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


app = typer.Typer(
    cls=LazyGroup,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    help="Ouroboros: gates from agents' mistakes.",
)


@app.callback()
def _root() -> None:
    """Ouroboros: gates from agents' mistakes."""


def main() -> None:
    """Entry point: run the CLI; our errors and usage errors are one line on stderr and exit status 2."""
    try:
        code = app(standalone_mode=False)
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except (typer.Abort, KeyboardInterrupt):
        raise SystemExit(130) from None
    except Exception as exc:
        # Imported only now: an OuroError raised has loaded it already, and ``ouro --help`` never needs it.
        from schemas.errors import OuroError

        if isinstance(exc, OuroError):
            print(f"ouro: error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
        show = getattr(exc, "show", None)
        if callable(show) and hasattr(exc, "exit_code"):  # click's usage errors (typer ships its own click)
            show()
            raise SystemExit(2) from None
        raise
    raise SystemExit(code if isinstance(code, int) else 0)

"""The root click group of ``ouro`` (typer's): it lists the commands of ``ops.cli._table`` and imports a
command's module only when that command runs. Loaded only for a command: ``ouro --help`` never needs it."""

from __future__ import annotations

from importlib import import_module
from typing import Annotated

import typer
from typer import _click as click
from typer.core import TyperGroup

from ouroboros_gates.ops.cli._table import COMMANDS, ROOT_HELP, usage

__all__ = ["LazyGroup", "app", "load"]


def load(name: str) -> click.Command:
    """The click command ``name`` stands for, its module imported now."""
    entry = COMMANDS[name]
    found = getattr(import_module(entry.module), entry.attribute)
    if isinstance(found, typer.Typer):
        command: click.Command = typer.main.get_group(found)
    else:
        single = typer.Typer(add_completion=False)
        # A command that passes options on to another program says so (``ouro worker``: Celery's own).
        single.command(name, context_settings=getattr(found, "context_settings", None))(found)
        command = typer.main.get_command(single)
    command.name = name
    return command


class LazyGroup(TyperGroup):
    """The root group: lists the commands from ``COMMANDS`` and imports one only when it runs; its help is
    ``ops.cli._table.usage``, the text ``ouro --help`` prints without loading this module."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load(cmd_name) if cmd_name in COMMANDS else None

    def get_help(self, ctx: click.Context) -> str:
        return usage(ctx.terminal_width).rstrip("\n")


app = typer.Typer(cls=LazyGroup, no_args_is_help=True, rich_markup_mode=None, help=ROOT_HELP)


def _version(asked: bool) -> None:
    if asked:
        from ouroboros_gates import __version__
        from ouroboros_gates.decider.assemble import shipped_digests

        typer.echo(f"ouro {__version__}")
        for name, digest in shipped_digests().items():
            typer.echo(f"{name} {digest}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", is_eager=True, callback=_version, help="Show the version and exit."),
    ] = False,
) -> None:
    """Ouroboros: gates from agents' mistakes."""

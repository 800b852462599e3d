"""``ouro``: the command line of the fleet. Every error is one clear line and exit status 2.

The root group knows each command by name, where it lives and its one-line help; a command's module is
imported only when that command runs, so a command pays for what it uses and nothing else: ``measure
h-fleet`` and ``corpus stats`` load no SQLAlchemy, Celery or event store. ``ouro`` and ``ouro --help`` print
the command table itself (``usage``) and import no command-line library at all.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ouroboros_gates._lazy import lazy
from ouroboros_gates.ops.cli._table import COMMANDS, ROOT_HELP, Entry, usage

if TYPE_CHECKING:
    from ouroboros_gates.ops.cli._root import LazyGroup, app, load

__all__ = ["COMMANDS", "ROOT_HELP", "Entry", "LazyGroup", "app", "load", "main", "usage"]


def main() -> None:
    """Entry point: run the CLI; our errors and usage errors are one line on stderr and exit status 2."""
    _table_without_command()
    import typer

    from ouroboros_gates.ops.cli._root import app

    try:
        code = app(prog_name="ouro", standalone_mode=False)
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except (typer.Abort, KeyboardInterrupt):
        raise SystemExit(130) from None
    except Exception as exc:
        _exit_on_error(exc)
        raise
    raise SystemExit(code if isinstance(code, int) else 0)


def _table_without_command() -> None:
    """``ouro --help`` prints the command table, and ``ouro`` alone prints it as the usage error it is,
    before any command-line library is loaded."""
    # The shell asking for completions puts the words in the environment.
    completing = "_OURO_COMPLETE" in os.environ
    if sys.argv[1:] == ["--help"]:
        sys.stdout.write(usage())
        raise SystemExit(0)
    if not sys.argv[1:] and not completing:
        sys.stderr.write(usage())
        raise SystemExit(2)


def _exit_on_error(exc: Exception) -> None:
    """Our errors and click's usage errors (typer ships its own click) as one line and exit status 2; any
    other error is the caller's to raise."""
    # Imported only now: an OuroError raised has loaded it already.
    from ouroboros_gates.schemas.errors import OuroError

    if isinstance(exc, OuroError):
        print(f"ouro: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    show = getattr(exc, "show", None)
    if callable(show) and hasattr(exc, "exit_code"):
        show()
        raise SystemExit(2) from None


# ``app``, ``load`` and ``LazyGroup`` live with typer in ``ops.cli._root``, imported on first use.
_HOMES = {name: "ouroboros_gates.ops.cli._root" for name in ("LazyGroup", "app", "load")}
__getattr__ = lazy(__name__, _HOMES)

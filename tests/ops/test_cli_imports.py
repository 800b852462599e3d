"""``ouro`` imports a command's module only when that command runs: what each command loads is listed here,
so a heavy import creeping into a light command fails a test (times are the benchmarks' business)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ops.cli import COMMANDS, load

ROOT = Path(__file__).resolve().parents[2]
HEAVY = {"sqlalchemy", "celery", "kombu", "pydantic", "pydantic_settings", "events", "workers", "fastapi", "numpy"}


def _loaded(*argv: str, stdin: str = "") -> set[str]:
    """The top-level modules ``ouro ARGV…`` has loaded when it exits."""
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('\\n'.join(sorted(sys.modules)), file=sys.stderr))\n"
        f"sys.argv = ['ouro', *{list(argv)!r}]\n"
        "from ops.cli import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input=stdin, capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode in (0, 2), done.stderr
    return set(done.stderr.splitlines())


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_help_line_is_the_commands_own(name: str) -> None:
    command = load(name)
    own = " ".join((command.help or "").split("\n\n")[0].split())
    assert COMMANDS[name].help == own


def test_help_loads_no_command_module_and_nothing_heavy() -> None:
    loaded = _loaded("--help")
    assert {m.split(".")[0] for m in loaded}.isdisjoint(HEAVY)
    assert not any(m.startswith("ops.cli.") for m in loaded), sorted(m for m in loaded if m.startswith("ops.cli."))


def test_a_command_loads_only_its_own_module() -> None:
    loaded = _loaded("hooks", "--help")
    assert {m for m in loaded if m.startswith("ops.cli.")} == {"ops.cli.hooks"}
    # typer converts a command's parameters with pydantic, so a command's help loads pydantic (not the contract).
    assert {m.split(".")[0] for m in loaded}.isdisjoint(HEAVY - {"pydantic"} | {"schemas"})


def test_an_unknown_command_is_one_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from ops.cli import main; main()", "no-such-command"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "No such command 'no-such-command'" in done.stderr

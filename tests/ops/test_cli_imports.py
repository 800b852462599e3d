"""``ouro`` imports a command's module only when that command runs: what each command loads is listed here,
so a heavy import creeping into a light command fails a test (times are the benchmarks' business)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ouroboros_gates.ops.cli import COMMANDS, app, load, usage

ROOT = Path(__file__).resolve().parents[2]
HEAVY = {
    "sqlalchemy",
    "celery",
    "kombu",
    "pydantic",
    "pydantic_core",
    "pydantic_settings",
    "events",
    "workers",
    "fastapi",
    "numpy",
}


def _loaded(*argv: str, stdin: str = "") -> set[str]:
    """The top-level modules ``ouro ARGV…`` has loaded when it exits."""
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('\\n'.join(sorted(sys.modules)), file=sys.stderr))\n"
        f"sys.argv = ['ouro', *{list(argv)!r}]\n"
        "from ouroboros_gates.ops.cli import main\n"
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
    # not even the command-line library: the root help is the command table itself
    assert {m.removeprefix("ouroboros_gates.").split(".")[0] for m in loaded}.isdisjoint(
        HEAVY | {"typer", "click", "rich"}
    )
    assert {m for m in loaded if m.startswith("ouroboros_gates.ops.cli.")} == {
        "ouroboros_gates.ops.cli._table"
    }  # the table, no command's module


def test_help_lists_every_command_with_its_whole_help_line_and_the_group_says_the_same() -> None:
    env = {**os.environ, "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-c", "from ouroboros_gates.ops.cli import main; main()", "--help"],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert done.stdout == usage(100)
    assert done.stdout.startswith("Usage: ouro [OPTIONS] COMMAND [ARGS]...\n")
    rows: dict[str, str] = {}  # a row starts at column 2; its wrapped lines are indented further
    for line in done.stdout.split("Commands:\n", 1)[1].splitlines():
        if line.startswith("   "):
            rows[next(reversed(rows))] += " " + line.strip()
        else:
            name, _, text = line.strip().partition("  ")
            rows[name] = text.strip()
    assert rows == {name: entry.help for name, entry in COMMANDS.items()}
    assert all(len(line) <= 100 for line in done.stdout.splitlines())
    # in-process, through typer's group, the same text (at the terminal width click gives it)
    result = CliRunner().invoke(app, ["--help"], terminal_width=100)
    assert result.exit_code == 0 and result.stdout == usage(100)


def test_no_command_is_the_table_as_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from ouroboros_gates.ops.cli import main; main()"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("Usage: ouro [OPTIONS] COMMAND [ARGS]...") and "\n  scan  " in done.stderr


def test_a_command_loads_only_its_own_module() -> None:
    loaded = _loaded("hooks", "--help")
    assert {m for m in loaded if m.startswith("ouroboros_gates.ops.cli.")} == {
        "ouroboros_gates.ops.cli._root",
        "ouroboros_gates.ops.cli._table",
        "ouroboros_gates.ops.cli.hooks",
    }
    # typer from 0.29 loads pydantic with itself (requirements.lock holds it below that).
    assert {m.removeprefix("ouroboros_gates.").split(".")[0] for m in loaded}.isdisjoint(HEAVY | {"schemas"})


def test_h_fleet_loads_its_measure_and_nothing_heavy() -> None:
    run = next(iter(sorted((ROOT / "examples" / "runs").glob("*/events.jsonl"))))
    loaded = _loaded("measure", "h-fleet", str(run), "--json")
    assert {m.removeprefix("ouroboros_gates.").split(".")[0] for m in loaded}.isdisjoint(HEAVY - {"workers"})
    assert {m for m in loaded if m.startswith("ouroboros_gates.workers.")} == {
        "ouroboros_gates.workers.measurer",
        "ouroboros_gates.workers.measurer.hfleet",
    }
    assert {m for m in loaded if m.startswith("ouroboros_gates.schemas.")} == {
        f"ouroboros_gates.schemas.{name}" for name in ("_child", "errors", "kinds")
    }


def test_corpus_stats_counts_without_a_model_and_nothing_of_the_fleet() -> None:
    run = next(iter(sorted((ROOT / "examples" / "runs").glob("*/events.jsonl"))))
    loaded = _loaded("corpus", "stats", str(run), "--json")
    # the readers' plain events are counted: no pydantic, no event log, broker or worker is loaded
    assert {m.removeprefix("ouroboros_gates.").split(".")[0] for m in loaded}.isdisjoint(HEAVY)
    assert "ouroboros_gates.harness.reader" in loaded and "ouroboros_gates.harness.stats" in loaded
    # of the contract, the readers' light modules alone: no model at all
    assert {m for m in loaded if m.startswith("ouroboros_gates.schemas.")} == {
        "ouroboros_gates.schemas.errors",
        "ouroboros_gates.schemas.kinds",
    }


def test_an_unknown_command_is_one_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from ouroboros_gates.ops.cli import main; main()", "no-such-command"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 2
    assert "No such command 'no-such-command'" in done.stderr


@pytest.mark.parametrize("group", ["miner", "datalog"])
def test_a_miner_group_help_loads_no_miner(group: str) -> None:
    loaded = _loaded(group, "--help")
    assert {m.removeprefix("ouroboros_gates.").split(".")[0] for m in loaded}.isdisjoint(
        HEAVY | {"miners", "harness", "schemas"}
    )


def _commands(command: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every command under ``command`` (typer's own click, so matched by shape)."""
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, f"{path} {name}")


def test_every_many_valued_argument_shows_its_metavar_in_capitals() -> None:
    # typer names an argument without a metavar by its parameter (``{paths}...``): the usage line names PATH…
    found = {
        (path, param.name): param.metavar
        for name in COMMANDS
        for path, command in _commands(load(name), name)
        for param in command.params
        if param.param_type_name == "argument" and param.nargs == -1 and not getattr(param, "hidden", False)
    }
    assert found and all(metavar and metavar.isupper() for metavar in found.values()), found

"""The ``ouro`` command line as a user runs it: one clear error line and exit 2 on bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def ouro(*args: str, state: Path, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {
        **os.environ,
        "OURO_STATE": str(state),
        "OURO_ROOTS": str(state.parent),
        "COLUMNS": "200",
        **env,
    }
    full_env.pop("OURO_DATABASE_URL", None)
    full_env.pop("OURO_BROKER_URL", None)
    return subprocess.run(
        [sys.executable, "-c", "from ouroboros_gates.ops.cli import main; main()", *args],
        cwd=ROOT,
        env=full_env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_schema_lists_and_prints_json_schema(tmp_path: Path) -> None:
    listed = ouro("schema", state=tmp_path / "s")
    assert listed.returncode == 0 and "Finding" in listed.stdout.split()
    shown = ouro("schema", "Finding", state=tmp_path / "s")
    assert shown.returncode == 0
    assert set(json.loads(shown.stdout)["properties"]) >= {"miner", "rule", "subject", "severity", "proof"}


@pytest.mark.parametrize(
    ("args", "stdin", "needle"),
    [
        (("schema", "Findng"), None, "NAME:"),
        (("publish", "Nope", "{}"), None, "TYPE: unknown message type 'Nope'"),
        (("publish", "Probe", "{not json"), None, "JSON: line 1 column 2"),
        (("publish", "Probe", "-"), '{"probe": "p", "hold_s": -1}', "Probe.hold_s: Input should be greater"),
        (("publish", "Probe", "[1]"), None, "JSON: a message is a JSON object"),
        (("events", "show", "99"), None, "no event at 99"),
        (("ingest", str(ROOT / "no-such-dir")), None, "no-such-dir: no such file or directory"),
        (
            ("ingest", str(ROOT / "miners" / "datalog")),
            None,
            "no harness logs (*.jsonl, *.ndjson, *.json, *.traj) in it or below it",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...], stdin: str | None, needle: str
) -> None:
    result = ouro(*args, state=tmp_path / "s", stdin=stdin)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ouro: error: "), result.stderr
    assert needle in lines[0]


def test_bad_setting_names_its_key(tmp_path: Path) -> None:
    result = ouro("status", state=tmp_path / "s", OURO_API_PORT="nope")
    assert result.returncode == 2
    assert result.stderr.strip().startswith("ouro: error: OURO_API_PORT:")


def test_db_upgrade_replay_and_events_on_an_empty_log(tmp_path: Path) -> None:
    state = tmp_path / "s"
    assert "database at revision" in ouro("db", "upgrade", state=state).stdout
    replayed = ouro("replay", "--rebuild", state=state)
    assert replayed.returncode == 0 and "ledger digest" in replayed.stdout
    assert ouro("events", "tail", state=state).stdout == ""


def test_db_current_history_and_downgrade(tmp_path: Path) -> None:
    state = tmp_path / "s"
    assert "none (empty)" in ouro("db", "current", state=state).stdout
    upgraded = ouro("db", "upgrade", state=state).stdout.split()[-1]
    assert ouro("db", "current", state=state).stdout.strip() == f"database at revision {upgraded} (at head)"
    history = ouro("db", "history", state=state).stdout.splitlines()
    assert history[0].startswith("base -> 0001  ")
    assert history[-1].split()[2] == upgraded and history[-1].endswith("<- database")
    down = ouro("db", "downgrade", "0004", state=state)
    assert down.returncode == 0 and down.stdout.strip() == "database at revision 0004"
    assert "(head is " in ouro("db", "current", state=state).stdout
    bad = ouro("db", "downgrade", "nope", state=state)
    assert bad.returncode == 2 and bad.stderr.startswith("ouro: error: REVISION: downgrade to 'nope'")


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_names_the_release_and_what_it_decides_with(tmp_path: Path, flag: str) -> None:
    from ouroboros_gates import __version__

    shown = ouro(flag, state=tmp_path / "s")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == f"ouro {__version__}"
    named = dict(line.rsplit(" ", 1) for line in lines[1:])
    assert {"program memory-vote-static", "memory"} <= set(named)
    assert all(len(digest) == 64 and int(digest, 16) >= 0 for digest in named.values())


def test_the_shell_completes_commands_and_options(tmp_path: Path) -> None:
    commands = ouro(
        state=tmp_path / "s", _OURO_COMPLETE="complete_bash", COMP_WORDS="ouro sc", COMP_CWORD="1"
    )
    assert commands.returncode == 0 and commands.stdout.split() == ["schema", "scan"]
    options = ouro(
        state=tmp_path / "s", _OURO_COMPLETE="complete_bash", COMP_WORDS="ouro scan --fa", COMP_CWORD="2"
    )
    assert options.stdout.split() == ["--fail-on"]
    # the shell named, not detected from the processes above the test (which differ between machines)
    script = ouro(
        "--show-completion", "bash", state=tmp_path / "s", _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1"
    )
    assert script.returncode == 0 and "_OURO_COMPLETE=complete_bash" in script.stdout

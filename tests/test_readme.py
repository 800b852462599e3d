"""The README is the contract with a new user: its commands and its configuration table stay true."""

from __future__ import annotations

import re
from pathlib import Path

from ouroboros_gates.schemas.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_every_setting_is_documented() -> None:
    for name in Settings.model_fields:
        assert f"`OURO_{name.upper()}`" in README, f"OURO_{name.upper()} missing from the README"


def test_ci_runs_exactly_the_readme_test_command() -> None:
    commands = re.findall(r"```sh\n(python3 -m venv .*)\n```", README)
    assert len(commands) == 2, commands
    assert "ouro loop examples" in commands[0]
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == commands[1]

"""The README is the contract with a new user: short enough to read, its two commands the ones CI runs, and
every link in it leading to a page that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_a_newcomer_reads_it_in_five_minutes() -> None:
    assert len(README) < 12_000


def test_ci_runs_exactly_the_readme_test_command() -> None:
    commands = re.findall(r"```sh\n(python3 -m venv .*)\n```", README)
    assert len(commands) == 2, commands
    assert "ouro loop examples" in commands[0]
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == commands[1]


def test_every_link_leads_to_a_file_of_the_repository() -> None:
    links = [link for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README) if "://" not in link]
    assert links and [link for link in links if not (ROOT / link).exists()] == []

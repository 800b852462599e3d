"""The documentation site builds without a warning, and its reference pages are the code's own: the CLI
reference made from the commands, the configuration reference from the settings model."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ouroboros_gates.schemas.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("schemas", "harness", "forge", "llm", "events", "miners", "decider", "workers", "ops")
# Variables the fleet sets for the processes it starts, not settings a user gives.
INTERNAL = {"OURO_FORGE_DIR", "OURO_FORGE_WRITES", "OURO_FIXER_TICKET", "OURO_FIXER_BRANCH", "OURO_COMPLETE"}


def test_the_reference_pages_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "generate.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_every_variable_the_code_reads_is_a_documented_setting() -> None:
    named = set()
    for package in SOURCES:
        for path in (ROOT / package).rglob("*.py"):
            named |= set(re.findall(r"\bOURO_[A-Z][A-Z0-9_]*[A-Z0-9]\b", path.read_text(encoding="utf-8")))
    settings = {f"OURO_{name.upper()}" for name in Settings.model_fields}
    roles = {
        f"OURO_{role.upper()}_" for role in ("miner", "prechecker", "labeler", "fixer", "decider", "merger")
    }
    unknown = {n for n in named - settings - INTERNAL if not any(n.startswith(r) for r in roles)}
    assert unknown == set(), "declare them in schemas/settings.py (the reference is made from it)"
    assert all(field.description for field in Settings.model_fields.values())


@pytest.mark.slow
def test_the_site_builds_without_a_warning(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(ROOT / "docs")]
    done = subprocess.run([*argv, str(tmp_path / "site")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "reference" / "cli.html").is_file()

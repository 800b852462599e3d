"""``ouro fix``: fixers stay off unless --fixers, a cap above zero, an agent command and a sandbox are
given."""

from __future__ import annotations

from pathlib import Path

from test_cli import ouro

from ouroboros_gates.ops.loop import fixers_refusal
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.fixer import find_sandbox


def test_fix_without_fixers_refuses_and_says_why(tmp_path: Path) -> None:
    done = ouro("fix", state=tmp_path / "state")
    assert done.returncode == 1
    assert "fixers are off: they launch only with --fixers (OURO_FIXERS=1)" in done.stderr


def test_each_missing_condition_is_named(tmp_path: Path) -> None:
    base = Settings(state=tmp_path / "state", fixers=True, fixer_daily_cap_usd=5.0)
    no_cap = fixers_refusal(base.model_copy(update={"fixer_daily_cap_usd": 0.0}))
    assert no_cap == "fixers are off: the daily cap OURO_FIXER_DAILY_CAP_USD is 0"
    missing = fixers_refusal(base.model_copy(update={"fixer_command": "no-such-agent-here -p"}))
    assert (
        missing == "fixers are off: the agent command 'no-such-agent-here' (OURO_FIXER_COMMAND) is not found"
    )
    sandbox, why = find_sandbox()
    expected = None if sandbox is not None else f"fixers refuse unattended launch: {why}"
    assert fixers_refusal(base.model_copy(update={"fixer_command": "true"})) == expected

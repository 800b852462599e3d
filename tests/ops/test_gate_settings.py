"""Every hook setting is checked: a value it cannot use falls back to its default with one warning line
naming it, and the hook still records the payload, decides, and exits 0. ``OURO_GATE_FAIL=closed`` denies
what no gate judged; ``open`` (the default) allows it, saying so."""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hook_support import decision, pre_tool, run_hook, self_match_gate

from ouroboros_gates.ops.gate.paths import lock_path, run_file
from ouroboros_gates.ops.gate.settings import HookSettings, hook_settings, server_settings
from ouroboros_gates.ops.hooks_install import hook_command

OFFENDING = "pkill -f 'node server.js'"


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e300", "-1", "0", "0.01", "fast", "5s", "1e3"])
def test_a_timeout_out_of_range_falls_back_with_one_warning(value: str) -> None:
    settings, warnings = hook_settings({"OURO_HOOK_TIMEOUT_S": value})
    assert settings.timeout_s == 5.0
    assert warnings == [f"OURO_HOOK_TIMEOUT_S={value!r} is not a number of seconds from 0.1 to 600; using 5"]


def _read(settings: HookSettings) -> tuple[float, bool, bool, bool]:
    return settings.timeout_s, settings.autoflush, settings.trace, settings.fail_closed


def test_every_setting_has_a_type_a_default_and_a_warning() -> None:
    defaults, none = hook_settings({})
    assert none == [] and _read(defaults) == (5.0, True, False, False)
    good = {
        "OURO_HOOK_TIMEOUT_S": " 2.5 ",
        "OURO_HOOK_AUTOFLUSH": "off",
        "OURO_HOOK_TRACE": "Yes",
        "OURO_GATE_FAIL": "CLOSED",
        "OURO_HOOK_WARN": "sync",
        "OURO_GATE_IDLE_S": "60",
    }
    settings, warnings = hook_settings(good)
    assert warnings == [] and _read(settings) == (2.5, False, True, True)
    bad = {
        "OURO_HOOK_AUTOFLUSH": "2",
        "OURO_HOOK_TRACE": "maybe",
        "OURO_GATE_FAIL": "sometimes",
        "OURO_HOOK_WARN": "later",
        "OURO_GATE_IDLE_S": "nan",
    }
    settings, warnings = hook_settings(bad, timeout="inf")
    assert _read(settings) == (5.0, True, False, False)
    assert [w.split("=", 1)[0] for w in warnings] == [
        "--timeout",
        "OURO_HOOK_AUTOFLUSH",
        "OURO_HOOK_TRACE",
        "OURO_GATE_FAIL",
        "OURO_HOOK_WARN",
        "OURO_GATE_IDLE_S",
    ]
    served, told = server_settings(bad)
    assert (served.warn, served.idle_s) == ("next", 1800.0) and len(told) == 2
    assert server_settings({"OURO_GATE_IDLE_S": "1e400"})[0].idle_s == 1800.0


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    state = tmp_path_factory.mktemp("settings") / "state"
    with self_match_gate(state) as command:
        yield state, command


@pytest.mark.slow
@pytest.mark.parametrize("value", ["inf", "nan", "1e300", "-1", "abc"])
def test_the_hook_with_a_bad_timeout_warns_once_records_and_still_denies(
    gated: tuple[Path, str], value: str
) -> None:
    state, command = gated
    session = f"bad-timeout-{value}"
    result = run_hook(command, pre_tool(session, OFFENDING, "t1"), env={"OURO_HOOK_TIMEOUT_S": value})
    assert decision(result) == "deny"
    assert result.stderr.splitlines() == [
        f"ouro hook: OURO_HOOK_TIMEOUT_S={value!r} is not a number of seconds from 0.1 to 600; using 5"
    ]
    recorded = [json.loads(line) for line in Path(run_file(str(state), session)).read_text().splitlines()]
    assert recorded[0]["event"]["tool_input"]["command"] == OFFENDING


@pytest.mark.slow
def test_the_hook_with_every_setting_bad_warns_once_each_and_still_denies(gated: tuple[Path, str]) -> None:
    _state, command = gated
    env = {
        "OURO_HOOK_AUTOFLUSH": "2",
        "OURO_HOOK_TRACE": "maybe",
        "OURO_GATE_FAIL": "sometimes",
        "OURO_HOOK_WARN": "later",
        "OURO_GATE_IDLE_S": "-5",
    }
    result = run_hook(
        command.replace("--state", "--timeout inf --state"), pre_tool("bad-all", OFFENDING, "t1"), env
    )
    assert decision(result) == "deny"
    lines = result.stderr.splitlines()
    assert len(lines) == 6 and all(line.startswith("ouro hook: ") and "; using " in line for line in lines)
    stop = run_hook(
        command, {"session_id": "bad-all", "hook_event_name": "Stop"}, env={"OURO_HOOK_TIMEOUT_S": "nan"}
    )
    assert stop.returncode == 0 and stop.stdout == ""


@pytest.mark.slow
@pytest.mark.parametrize("fail", ["open", "closed"])
def test_no_server_in_time_allows_open_and_denies_closed(tmp_path: Path, fail: str) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "gates.json").write_text(json.dumps({"version": 1, "gates": [{"name": "x"}]}))
    held = open(lock_path(str(state)), "a")  # noqa: SIM115 (a server "already running" that never answers)
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        env = {"OURO_HOOK_TIMEOUT_S": "1", "OURO_GATE_FAIL": fail}
        result = run_hook(hook_command(state), pre_tool("s", "ls", "t1"), env=env)
        innocent = run_hook(
            hook_command(state), {"session_id": "s", "hook_event_name": "SessionEnd"}, env=env
        )
    finally:
        held.close()
    assert decision(result) == ("deny" if fail == "closed" else "allow")
    assert innocent.returncode == 0 and innocent.stdout == ""  # only tool calls are judged
    if fail == "closed":
        output = json.loads(result.stdout)["hookSpecificOutput"]
        assert (
            output["hookEventName"] == "PreToolUse"
            and "OURO_GATE_FAIL=closed" in output["permissionDecisionReason"]
        )
        assert "denies the call" in result.stderr
    else:
        assert "allowed" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("fail", ["open", "closed"])
def test_the_hard_timer_allows_open_and_denies_closed(gated: tuple[Path, str], fail: str) -> None:
    state, command = gated
    log = Path(run_file(str(state), f"held-{fail}"))
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as held:  # another writer holds the session's log: the hook cannot record in time
        fcntl.flock(held, fcntl.LOCK_EX)
        env = {"OURO_HOOK_TIMEOUT_S": "1", "OURO_GATE_FAIL": fail}
        result = run_hook(command, pre_tool(f"held-{fail}", OFFENDING, "t1"), env=env)
    assert decision(result) == ("deny" if fail == "closed" else "allow")
    assert result.stderr.startswith("ouro hook: no decision within the hook's timeout")
    if fail == "closed":
        reason = json.loads(result.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
        assert "the hook failed before its gates could judge the call" in reason


def test_the_hooks_fast_reader_and_the_typed_settings_agree() -> None:
    """The hook reads its settings without pydantic; the settings model declares and documents the same
    ones."""
    from pydantic import ValidationError

    from ouroboros_gates.ops.gate.settings import hook_settings, server_settings
    from ouroboros_gates.schemas.settings import Settings

    hook, _ = hook_settings({})
    server, _ = server_settings({})
    typed = Settings()
    assert (hook.timeout_s, hook.autoflush, hook.trace) == (
        typed.hook_timeout_s,
        typed.hook_autoflush,
        typed.hook_trace,
    )
    assert (hook.fail_closed, server.warn, server.idle_s) == (
        typed.gate_fail == "closed",
        typed.hook_warn,
        typed.gate_idle_s,
    )
    for name, value in [
        ("hook_timeout_s", "0.05"),
        ("hook_timeout_s", "601"),
        ("gate_idle_s", "inf"),
        ("gate_fail", "x"),
    ]:
        environ = {f"OURO_{name.upper()}": value}
        assert hook_settings(environ)[1], (name, value)  # the hook falls back, with a warning
        with pytest.raises(ValidationError):
            Settings(**{name: value})  # type: ignore[arg-type]

"""``ouro hooks install``: Claude Code's settings merged (the user's hooks kept, idempotent), a git
pre-push hook that passes through while ``ouro pre-push`` does not exist, and ``.pre-commit-hooks.yaml``."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ouroboros_gates.ops import hooks_install
from ouroboros_gates.ops.hooks_install import (
    EVENTS,
    hook_command,
    install_pre_push,
    install_settings,
    merge_settings,
    pre_push_script,
)
from ouroboros_gates.schemas.errors import ConfigurationError

ROOT = Path(__file__).resolve().parents[2]


def test_the_command_is_this_environments_interpreter_running_the_stdlib_hook(tmp_path: Path) -> None:
    command = hook_command(tmp_path / "state")
    script = ROOT / "ouroboros_gates" / "ops" / "hook_script.py"
    assert command == f"{sys.executable} -S -P {script} --state {tmp_path / 'state'}"
    assert "/shims/" not in command
    # without site, from anywhere: the payload is recorded under the state, the call allowed (no gate)
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "gates.json").write_text(json.dumps({"version": 1, "gates": []}))
    payload = {
        "session_id": "s-1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }
    env = {
        "PATH": os.environ["PATH"],
        "OURO_HOOK_AUTOFLUSH": "0",
    }  # no PYTHONPATH: the script finds its package
    done = subprocess.run(
        shlex.split(command),
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert json.loads((tmp_path / "state" / "runs" / "s-1" / "events.jsonl").read_text())["event"] == payload


def test_an_earlier_installs_module_command_is_ours_and_replaced_in_place() -> None:
    earlier = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "*",
                    "hooks": [{"type": "command", "command": "/venv/bin/python -P -m ops.hook --state /s"}],
                },
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]},
            ]
        }
    }
    now = merge_settings(earlier, "/venv/bin/python -S -P /venv/lib/ops/hook_script.py --state /s")
    commands = [h["command"] for entry in now["hooks"]["PreToolUse"] for h in entry["hooks"]]
    assert commands == ["/venv/bin/python -S -P /venv/lib/ops/hook_script.py --state /s", "echo mine"]


def test_a_pyenv_shim_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(hooks_install.sys, "executable", "/root/.pyenv/shims/python")
    with pytest.raises(ConfigurationError, match="shim"):
        hook_command(tmp_path)


def test_settings_are_merged_keeping_the_users_hooks_and_idempotent(tmp_path: Path) -> None:
    users = {"type": "command", "command": "echo mine", "timeout": 3}
    settings = {
        "model": "opus",
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [users]}], "Notification": []},
    }
    once = merge_settings(json.loads(json.dumps(settings)), "/venv/bin/python -P -m ops.hook --state /s")
    twice = merge_settings(json.loads(json.dumps(once)), "/venv/bin/python -P -m ops.hook --state /s")
    assert once == twice
    assert once["model"] == "opus" and once["hooks"]["Notification"] == []
    assert set(EVENTS) <= set(once["hooks"])
    pre = once["hooks"]["PreToolUse"]
    assert pre[0] == {"matcher": "Bash", "hooks": [users]}
    assert pre[1] == {
        "matcher": "*",
        "hooks": [
            {"type": "command", "command": "/venv/bin/python -P -m ops.hook --state /s", "timeout": 10}
        ],
    }
    assert once["hooks"]["Stop"] == [{"hooks": [pre[1]["hooks"][0]]}]  # no matcher outside tool events
    moved = merge_settings(json.loads(json.dumps(once)), "/other/python -P -m ops.hook --state /t")
    assert moved["hooks"]["PreToolUse"][0]["hooks"] == [users]
    assert [h["command"] for e in moved["hooks"]["PreToolUse"][1:] for h in e["hooks"]] == [
        "/other/python -P -m ops.hook --state /t"
    ]


def test_unreadable_settings_are_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{broken")
    with pytest.raises(ConfigurationError, match="nothing was changed"):
        install_settings(path, tmp_path / "state")
    assert path.read_text() == "{broken"


def _fake_ouro(path: Path, body: str) -> str:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def _push(hook: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    refs = "refs/heads/main 1111111 refs/heads/main 2222222\n"
    return subprocess.run(
        [str(hook), "origin", "git@example.com:o/r.git"],
        input=refs,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**os.environ, **(env or {})},
    )


def test_pre_push_passes_through_until_ouro_pre_push_exists(tmp_path: Path) -> None:
    hooks = tmp_path / "git" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "pre-push").write_text('#!/bin/sh\necho "user hook $1" >&2\ncat > "$(dirname "$0")/seen"\n')
    (hooks / "pre-push").chmod(0o755)
    installed = install_pre_push(hooks)
    assert installed == hooks / "pre-push" and (hooks / "pre-push.local").exists()
    assert install_pre_push(hooks) == installed  # idempotent: the user's hook is not moved twice
    assert not (hooks / "pre-push.local.local").exists()

    missing = _fake_ouro(tmp_path / "ouro-old", "echo '  scan          Decide every candidate'; exit 0")
    installed.write_text(pre_push_script(missing))
    passed = _push(installed)
    assert passed.returncode == 0, passed.stderr
    assert "user hook origin" in passed.stderr  # the previous hook ran first, with the push's stdin
    assert (hooks / "seen").read_text().startswith("refs/heads/main 1111111")

    table = 'if [ "$1" = "--help" ]; then echo "  pre-push      git\'s pre-push hook"; exit 0; fi'
    deciding = _fake_ouro(tmp_path / "ouro-new", f"{table}\ncat >&2; exit 1")
    installed.write_text(pre_push_script(deciding))
    blocked = _push(installed)
    assert blocked.returncode == 1 and "refs/heads/main 1111111" in blocked.stderr

    installed.write_text(pre_push_script(str(tmp_path / "no-such-ouro")))
    assert _push(installed, env={"PATH": "/usr/bin:/bin"}).returncode == 0  # no ouro at all: pass through


def test_ouro_hooks_install_writes_both_and_refuses_nothing_of_the_users(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        json.dumps(
            {"hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "x"}]}]}}
        )
    )
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    argv = ["hooks", "install", "--settings", str(settings), "--git-dir", str(tmp_path / "repo" / ".git")]
    argv += ["--state", str(tmp_path / "state"), "--no-refresh"]
    result = subprocess.run(
        [sys.executable, "-c", "from ouroboros_gates.ops.cli import main; main()", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    written = json.loads(settings.read_text())
    assert written["hooks"]["PreToolUse"][0]["matcher"] == "Edit"
    assert written["hooks"]["PreToolUse"][1]["hooks"][0]["command"] == hook_command(tmp_path / "state")
    assert hooks_install.PRE_PUSH_MARK in (tmp_path / "repo" / ".git" / "hooks" / "pre-push").read_text()


def test_pre_commit_hooks_yaml_ships_ouro_pre_push() -> None:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "- id: ouro-pre-push" in text
    for line in ("entry: ouro pre-push", "language: python", "stages: [pre-push]", "pass_filenames: false"):
        assert f"  {line}\n" in text

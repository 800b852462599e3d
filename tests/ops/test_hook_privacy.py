"""What the hook records stays out of the user's repository and has its secrets cut: ``ouro hooks install`` in
a checkout writes the machine-specific command to git-ignored local settings, the state lives in the user's
state directory, a state put inside a checkout ignores itself, a secret in a tool input is redacted before it
is written, a prompt is kept only when asked, and a flush queues into the state the hook was given."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hook_support import pre_tool, run_hook, stop_server

from ouroboros_gates.ops.gate.scrub import find_secrets, scrub_payload, scrub_text
from ouroboros_gates.ops.hooks_install import LOCAL_SETTINGS, SHARED_SETTINGS, keep_out_of_git
from ouroboros_gates.schemas.errors import ConfigurationError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.schemas.statedir import default_state_dir, project_key
from ouroboros_gates.workers.broker import MESSAGE_TABLE

SECRET = "sk-ant-api03-Zq8wX1v2B3n4M5k6J7h8G9f0"


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def _checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "main.py").write_text("print('hi')\n")
    _git("add", "main.py", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "first", cwd=repo)
    return repo


def _ouro(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    ouro = Path(sys.executable).with_name("ouro")
    return subprocess.run(
        [str(ouro), *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120, check=False
    )


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "OURO_STATE"}
    return {**env, "XDG_STATE_HOME": str(tmp_path / "xdg"), "OURO_HOOK_AUTOFLUSH": "0", **extra}


def _installed_command(repo: Path) -> str:
    settings = json.loads((repo / LOCAL_SETTINGS).read_text())
    (entry,) = settings["hooks"]["PreToolUse"]
    return str(entry["hooks"][0]["command"])


def test_a_hook_installed_in_a_checkout_leaves_nothing_git_would_pick_up(tmp_path: Path) -> None:
    repo = _checkout(tmp_path)
    env = _env(tmp_path)
    done = _ouro("hooks", "install", "--no-refresh", cwd=repo, env=env)
    assert done.returncode == 0, done.stderr
    command = _installed_command(repo)
    state = Path(shlex.split(command)[-1])
    assert state == tmp_path / "xdg" / "ouroboros" / project_key(str(repo))
    assert not (repo / SHARED_SETTINGS).exists()  # the committed settings get nothing
    (state / "gates.json").write_text(json.dumps({"version": 1, "gates": []}))
    payload = pre_tool(
        "s-1", f"export API_KEY={SECRET} && curl -H 'Authorization: Bearer abc123' api", "toolu_1"
    )
    answered = subprocess.run(
        command,
        shell=True,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=repo,
        env=env,
        timeout=30,
        check=False,
    )
    assert (answered.returncode, answered.stderr) == (0, "")
    assert _git("status", "--porcelain", "--untracked-files=all", cwd=repo) == ""
    recorded = (state / "runs" / "s-1" / "events.jsonl").read_text()
    assert SECRET not in recorded and "abc123" not in recorded
    command_text = json.loads(recorded)["event"]["tool_input"]["command"]
    assert command_text == "export API_KEY=<secret> && curl -H 'Authorization: Bearer <secret>' api"


def test_hook_entries_an_earlier_install_committed_are_taken_out(tmp_path: Path) -> None:
    repo = _checkout(tmp_path)
    shared = repo / SHARED_SETTINGS
    shared.parent.mkdir()
    earlier = {
        "model": "opus",
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "*",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/home/dev/.venv/bin/python -S -P "
                            "/home/dev/.venv/lib/ops/hook_script.py --state /home/dev/project/.ouroboros",
                        }
                    ],
                },
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]},
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "/v/bin/python -P -m ops.hook --state /s"}]}],
        },
    }
    shared.write_text(json.dumps(earlier))
    done = _ouro("hooks", "install", "--no-refresh", cwd=repo, env=_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "removed the hook entries" in done.stdout
    mine = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}
    assert json.loads(shared.read_text()) == {"model": "opus", "hooks": {"PreToolUse": [mine]}}
    assert "/home/dev" not in shared.read_text()


def test_a_tracked_settings_file_is_refused(tmp_path: Path) -> None:
    repo = _checkout(tmp_path)
    local = repo / LOCAL_SETTINGS
    local.parent.mkdir()
    local.write_text("{}\n")
    _git("add", "-f", str(local), cwd=repo)
    with pytest.raises(ConfigurationError, match="git tracks this file"):
        keep_out_of_git(local)
    done = _ouro("hooks", "install", "--no-refresh", cwd=repo, env=_env(tmp_path))
    assert done.returncode == 2 and "git tracks this file" in done.stderr
    assert local.read_text() == "{}\n"


def test_a_state_put_inside_a_checkout_ignores_itself(tmp_path: Path) -> None:
    repo = _checkout(tmp_path)
    command = f"{shlex.quote(sys.executable)} -P -m ouroboros_gates.ops.hook"
    fresh = repo / "sub" / "state"
    try:
        assert (
            run_hook(command, pre_tool("s-3", "ls", "toolu_3"), env={"OURO_STATE": str(fresh)}).returncode
            == 0
        )
    finally:
        stop_server(fresh)  # the gate server the hook started, not left to its idle timeout
    assert (fresh / ".gitignore").read_text() == "*\n"  # made by the hook: ignored from the start
    assert (fresh / "runs" / "s-3" / "events.jsonl").is_file()
    earlier = repo / ".ouroboros"  # a state an older version made, without the file
    (earlier / "r1").mkdir(parents=True)
    (earlier / "r1" / "events.jsonl").write_text("{}\n")
    assert Settings(state=earlier).state_dir == earlier.resolve()  # any command that opens it adds the file
    assert _git("status", "--porcelain", "--untracked-files=all", cwd=repo) == ""


def test_the_default_state_is_the_projects_folder_outside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _checkout(tmp_path)
    (repo / "deep" / "er").mkdir(parents=True)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    at_root, below = default_state_dir(str(repo)), default_state_dir(str(repo / "deep" / "er"))
    assert at_root == below == str(tmp_path / "xdg" / "ouroboros" / project_key(str(repo)))
    assert project_key(str(repo)).startswith("project-") and project_key(str(repo)) != project_key(
        str(tmp_path)
    )


def test_the_prompt_is_recorded_only_when_asked(tmp_path: Path) -> None:
    command = f"{shlex.quote(sys.executable)} -P -m ouroboros_gates.ops.hook --state {tmp_path / 'state'}"
    prompt = {
        "session_id": "s-4",
        "hook_event_name": "UserPromptSubmit",
        "prompt": f"use key {SECRET} please",
    }
    assert run_hook(command, prompt).returncode == 0
    assert run_hook(command, prompt, env={"OURO_RECORD_PROMPTS": "1"}).returncode == 0
    log = tmp_path / "state" / "runs" / "s-4" / "events.jsonl"
    lines = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    assert "prompt" not in lines[0] and lines[0]["prompt_chars"] == len(prompt["prompt"])
    assert lines[1]["prompt"] == "use key <secret> please"  # recorded, and still redacted


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        ("OPENAI_API_KEY=abc123 python run.py", "OPENAI_API_KEY=<secret> python run.py"),
        ("psql postgresql://app:hunter2@db.internal/app", "psql postgresql://app:<secret>@db.internal/app"),
        ("gh auth login --with-token ghp_" + "a" * 36, "gh auth login --with-token <secret>"),
        ('{"client_secret": "s3cr3t", "name": "x"}', '{"client_secret": "<secret>", "name": "x"}'),
        ("mysql --password=pw -u app", "mysql --password=<secret> -u app"),
        ("aws AKIAABCDEFGHIJKLMNOP", "aws <secret>"),
        ("monkey=banana; passes=3; ls -la", "monkey=banana; passes=3; ls -la"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "<secret>"),
    ],
)
def test_secret_shapes(text: str, scrubbed: str) -> None:
    assert scrub_text(text) == scrubbed
    assert find_secrets(scrubbed) == []  # scrubbing again finds nothing: the export gate passes it


def test_secret_named_keys_and_identifying_keys() -> None:
    payload: dict[str, Any] = {
        "session_id": "s",
        "tool_use_id": "t",
        "hook_event_name": "PreToolUse",
        "tool_name": "WebFetch",
        "tool_input": {
            "url": "https://x.example.org",
            "headers": {"Authorization": "Token abc", "Accept": "*/*"},
            "api_key": "k1",
            "password": "",
            "token_count": 3,
        },
    }
    scrubbed = scrub_payload(payload)
    assert scrubbed["tool_input"]["headers"] == {"Authorization": "<secret>", "Accept": "*/*"}
    assert scrubbed["tool_input"]["api_key"] == "<secret>" and scrubbed["tool_input"]["password"] == ""
    assert scrubbed["tool_input"]["token_count"] == 3 and scrubbed["session_id"] == "s"
    assert payload["tool_input"]["api_key"] == "k1"  # a copy: the caller's payload is left alone


def test_a_stop_flush_queues_into_the_state_it_was_given(tmp_path: Path) -> None:
    state, elsewhere = tmp_path / "given", tmp_path / "cwd"
    elsewhere.mkdir()
    command = f"{shlex.quote(sys.executable)} -P -m ouroboros_gates.ops.hook --state {state}"
    env = _env(tmp_path, OURO_BROKER_URL="", OURO_DATABASE_URL="", OURO_ROOTS=str(tmp_path))
    for payload in (pre_tool("s-5", "ls", "toolu_5"), {"session_id": "s-5", "hook_event_name": "Stop"}):
        done = subprocess.run(
            shlex.split(command),
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=elsewhere,
            env=env,
            timeout=30,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    stop_server(state)  # the gate server the hook started, not left to its idle timeout
    flushed = subprocess.run(
        [*shlex.split(command), "--flush"],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env=env,
        timeout=120,
        check=False,
    )
    assert flushed.returncode == 0, flushed.stderr
    assert flushed.stdout.split() == ["queued", "s-5"]
    with sqlite3.connect(state / "broker.sqlite") as broker:
        (queued,) = broker.execute(f"select count(*) from {MESSAGE_TABLE}").fetchone()
    assert queued == 1
    assert not (elsewhere / ".ouroboros").exists()
    assert [path for path in (tmp_path / "xdg").rglob("*") if path.is_file()] == []  # no broker, no log there


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "yes", "on", "0", "false", "no", "off"])
def test_the_hook_reads_ouro_record_prompts_as_the_settings_do(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ouroboros_gates.ops.hook import _record_prompts
    from ouroboros_gates.schemas.settings import load_settings

    monkeypatch.setenv("OURO_RECORD_PROMPTS", value)
    assert _record_prompts() is load_settings().record_prompts

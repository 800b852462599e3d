"""The hook hands runs to the fleet through a spool, never through the broker: with the broker down it
records, spools and returns at once; a flush with the broker down keeps every entry; a flush with it up
publishes one IngestRun per run (the test's own Redis)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import redis
from hook_support import closed_port, pre_tool, run_hook

from ouroboros_gates.ops.hooks_install import hook_command


def _flush(state: Path, broker: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OURO_BROKER_URL": broker, "OURO_STATE": str(state), "OURO_ROOTS": str(state)}
    return subprocess.run(
        [sys.executable, "-P", "-m", "ouroboros_gates.ops.hook", "--flush", "--state", str(state)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


def test_spooled_with_the_broker_down_then_flushed_when_it_is_up(tmp_path: Path, redis_url: str) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "gates.json").write_text(json.dumps({"version": 1, "gates": []}))  # no gate: no server needed
    down = f"redis://127.0.0.1:{closed_port()}/0"
    command = hook_command(state)
    started = time.monotonic()
    for payload in (
        {"session_id": "run-a", "hook_event_name": "SessionStart", "source": "startup"},
        pre_tool("run-a", "ls", "toolu_1"),
        {"session_id": "run-b", "hook_event_name": "UserPromptSubmit", "prompt": "hi"},
        {"session_id": "run-a", "hook_event_name": "Stop", "stop_hook_active": False},
    ):
        result = run_hook(command, payload, env={"OURO_BROKER_URL": down})
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert time.monotonic() - started < 8  # four whole processes; the broker is never contacted
    spooled = [json.loads(line) for line in (state / "spool" / "hooks.jsonl").read_text().splitlines()]
    assert [entry["run"] for entry in spooled] == ["run-a", "run-a", "run-b", "run-a"]
    assert spooled[0]["path"] == str(state / "runs" / "run-a" / "events.jsonl")

    refused = _flush(state, down)
    assert refused.returncode == 1
    assert "broker unreachable" in refused.stderr and "4 spooled line(s) kept" in refused.stderr
    kept = list((state / "spool").glob("draining-*.jsonl"))
    assert len(kept) == 1 and len(kept[0].read_text().splitlines()) == 4
    assert not (state / "spool" / "hooks.jsonl").exists()

    run_hook(command, pre_tool("run-c", "pwd", "toolu_2"), env={"OURO_BROKER_URL": down})  # spooled meanwhile
    sent = _flush(state, redis_url)
    assert sent.returncode == 0, sent.stderr
    assert sorted(sent.stdout.split()) == sorted(["queued", "run-a", "queued", "run-b", "queued", "run-c"])
    assert not list((state / "spool").glob("*.jsonl"))

    client = redis.Redis.from_url(redis_url)
    messages = [json.loads(raw) for raw in client.lrange("miner", 0, -1)]
    assert {m["headers"]["task"] for m in messages} == {"miner.ingest"}
    bodies = [json.loads(base64.b64decode(m["body"]))[0][0] for m in messages]
    assert sorted(b["run"] for b in bodies) == ["run-a", "run-b", "run-c"]
    assert {b["path"] for b in bodies} == {
        str(state / "runs" / r / "events.jsonl") for r in ("run-a", "run-b", "run-c")
    }


def test_a_flush_with_nothing_spooled_publishes_nothing(tmp_path: Path) -> None:
    result = _flush(tmp_path, f"redis://127.0.0.1:{closed_port()}/0")
    assert (result.returncode, result.stdout) == (0, "")

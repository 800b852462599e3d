"""One definition of a struggle: five calls the installed ``self-match`` gate denies through the real hook are
five struggles, attributed to the gate, in ``ouro corpus stats``, in the run the fleet records (the measurer's
input) and in ``/api/ouroboros`` (what the ops page plots)."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient
from hook_support import post_tool, pre_tool, run_hook, wait_for
from typer.testing import CliRunner

from ouroboros_gates.events import Metadata, SqlEventStore, StreamWrite, ensure_schema, utcnow
from ouroboros_gates.ops.api import create_app
from ouroboros_gates.ops.cli.corpus import app as corpus_app
from ouroboros_gates.ops.gate.cache import compile_gates
from ouroboros_gates.ops.gate.client import notify, server_pid, start_server
from ouroboros_gates.ops.hooks_install import hook_command, merge_settings
from ouroboros_gates.schemas import IngestRun
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.miner.ingest import ingest_run

pytestmark = pytest.mark.slow

SESSION = "sess-struggles"
DENIED = "pkill -f 'python -m http.server'"
"""A pattern that matches the shell running it: the self-match gate refuses it."""


@pytest.fixture(scope="module")
def denied_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The hook's log of a session of three allowed calls and five calls the self-match gate denied."""
    state = tmp_path_factory.mktemp("struggles") / "state"
    state.mkdir()
    previous = os.environ.pop("OURO_MINERS_PATH", None)
    try:
        if not compile_gates(state, ["self-match"]).gates:
            pytest.skip("self-match does not pass its own test, so it is not a gate")
        start_server(str(state))
        wait_for(lambda: notify(str(state), {"op": "ping"}, wait_s=1.0))
        command = merge_settings({}, hook_command(state))["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        for number, allowed in enumerate(("git status", "ls -la", "python -m http.server 8000 &"), start=1):
            assert run_hook(command, pre_tool(SESSION, allowed, f"toolu_ok{number}")).stdout == ""
            run_hook(command, post_tool(SESSION, allowed, f"toolu_ok{number}"))
        for number in range(1, 6):
            answer = json.loads(run_hook(command, pre_tool(SESSION, DENIED, f"toolu_deny{number}")).stdout)
            assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
        yield state / "runs" / SESSION / "events.jsonl"
    finally:
        if not notify(str(state), {"op": "stop"}, wait_s=2.0) and (pid := server_pid(str(state))) is not None:
            os.kill(pid, signal.SIGTERM)  # it did not answer: stop it anyway
        if previous is not None:
            os.environ["OURO_MINERS_PATH"] = previous


def test_corpus_stats_counts_the_gates_denials_as_struggles(denied_run: Path) -> None:
    result = CliRunner().invoke(corpus_app, ["stats", "--json", str(denied_run)])
    assert result.exit_code == 0, result.output
    [run] = json.loads(result.stdout)["runs"]
    assert (run["tool_calls"], run["tool_errors"]) == (8, 5)
    assert run["tool_errors_by_gate"] == {"self-match": 5} and run["tool_errors_by_tool"] == {"Bash": 5}
    table = CliRunner().invoke(corpus_app, ["stats", str(denied_run)]).stdout
    assert "# Struggles a gate's denial accounts for\ngate\tdenied calls\nself-match\t5\n" in table


def test_the_measurer_and_the_api_count_the_same_five(denied_run: Path, tmp_path: Path) -> None:
    settings = Settings(state=tmp_path / "fleet", roots=str(denied_run.parents[1]), broker_url="memory://")
    message = IngestRun(message_id="ingest-struggles", path=str(denied_run), run=SESSION, tenant="default")
    recorded = ingest_run(message, settings)  # what the miner worker records for the run
    assert (recorded.summary.tool_calls, recorded.summary.tool_errors) == (8, 5)
    store = SqlEventStore.from_url(settings.event_log_url)
    ensure_schema(store.engine)
    store.commit([StreamWrite(f"run/{SESSION}", [recorded])], Metadata(producer="test", message_id="run-1"))
    store.close()
    app = create_app(settings, catch_up_every_s=None)
    snapshot = TestClient(app, base_url="http://127.0.0.1").get("/api/ouroboros").json()
    day = utcnow().astimezone(ZoneInfo(settings.timezone)).date().isoformat()
    [point] = [
        p
        for p in snapshot["series"]["ouroboros.struggle_rate_per_1k_tool_calls"]
        if p["labels"]["day"] == day
    ]
    assert point["value"] == pytest.approx(1000 * 5 / 8)

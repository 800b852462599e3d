"""The loop's hands end to end on the embedded default: ticket -> pre-check -> (fake) fixer -> ready pull
request -> merge train -> merged -> ticket closed, every step an event, through the real queue path."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest
from test_cli import ouro

from ouroboros_gates.events import SqlEventStore
from ouroboros_gates.workers.fixer import find_sandbox

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(find_sandbox()[0] is None, reason=find_sandbox()[1]),
]

ROOT = Path(__file__).resolve().parents[2]
RUN = "2f8c4d1e-6a3b-4c7d-9e21-5b0a7f3c8d14"

# A fake agent: stream-json with total_cost_usd (reopened once), a commit on its branch, a ready pull request.
AGENT = """
import json, os, subprocess, sys
sys.path.insert(0, {root!r})
from ouroboros_gates.forge import LocalForge
ticket, branch = int(os.environ["OURO_FIXER_TICKET"]), os.environ["OURO_FIXER_BRANCH"]
def say(cost):
    print(json.dumps({{"type": "result", "subtype": "success", "session_id": branch, "total_cost_usd": cost,
                      "timestamp": "2026-10-05T19:0{{}}:00Z".format(int(cost * 4))}}), flush=True)
say(0.25); say(0.5); say(0.25)
open(f"miner-{{ticket}}.txt", "w").write("a miner\\n")
git = ["git", "-c", "user.name=fixer", "-c", "user.email=fixer@example.invalid"]
message = f"miner for #{{ticket}}\\n\\nCSF-Session: {{branch}}\\n"
subprocess.run([*git, "add", "."], check=True)
subprocess.run([*git, "commit", "-q", "-m", message], check=True)
head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
body = (f"Closes #{{ticket}}.\\n\\n| Backtest FN | 0 |\\n\\n"
        "| Check | Command | Exit |\\n| --- | --- | --- |\\n"
        "| ruff | `ruff check` | 0 |\\n")
LocalForge({forge!r}, {bundle!r}, writes_dir=os.environ["OURO_FORGE_WRITES"]).open_pull_request({{
    "title": f"miner for #{{ticket}}", "body": body, "state": "open", "draft": False, "labels": [],
    "created_at": "2026-10-05T19:05:00+00:00", "base": "main", "head_sha": head, "author": "csf-fixer",
    "head_ref": branch, "commits": [{{"sha": head, "message": message}}], "checks": [],
}})
"""


def test_ticket_to_closed_through_a_fake_fixer_every_step_an_event(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "examples" / "forge", corpus / "forge")
    shutil.copy(ROOT / "examples" / "repo.bundle", corpus / "repo.bundle")
    shutil.copytree(ROOT / "examples" / "runs" / RUN, corpus / "runs" / RUN)
    agent = AGENT.format(root=str(ROOT), forge=str(corpus / "forge"), bundle=str(corpus / "repo.bundle"))
    # The agent's code travels in its argument list: the sandbox empties /tmp, where tmp_path lies.
    env = {"OURO_FIXER_COMMAND": f"{sys.executable} -c {shlex.quote(agent)}", "OURO_FIXER_DAILY_CAP_USD": "5"}
    first = ouro("loop", str(corpus), "--fixers", state=tmp_path / "state", **env)
    assert first.returncode == 0, first.stdout + first.stderr
    store = SqlEventStore.from_url(f"sqlite:///{tmp_path / 'state' / 'events.sqlite'}")
    events = store.read(limit=10_000)
    launched = {
        e.payload["verdict"]["ticket"]
        for e in events
        if e.type == "PrecheckCompleted" and e.payload["verdict"]["verdict"] == "launch"
    }
    assert 50 in launched
    for ticket in sorted(launched):
        stream = store.read_stream(f"ticket/{ticket}")
        verdict = next(e for e in stream if e.type == "PrecheckCompleted")
        ended = next(e for e in stream if e.type == "FixerSessionEnded")
        session = ended.payload["session"]
        assert (session["outcome"], session["cost_usd"]) == ("ready", 0.75)  # 0.5, then 0.25 after a reopen
        pull = session["pull_request"]
        recorded = [
            e
            for e in events
            if e.type == "RunRecorded" and e.payload["run"] == Path(session["worktree"]).parent.name
        ]
        assert recorded and recorded[0].payload["summary"]["cost_usd"] == pytest.approx(
            0.75
        )  # ingested as a run
        train = store.read_stream(f"pr/{pull}")
        assert [e.type for e in train] == ["MergeAttempted", "Merged"]
        closed = next(e for e in stream if e.type == "TicketClosed")
        assert closed.payload["pull_request"] == pull
        assert (
            verdict.position < ended.position < recorded[0].position < train[-1].position <= closed.position
        )
    assert f"Fixer sessions: {len(launched)}" in first.stdout
    # The console says which isolation the agents got, as the session records do.
    isolation = find_sandbox()[0].isolation  # type: ignore[union-attr]
    assert all(
        e.payload["session"]["isolation"] == isolation for e in events if e.type == "FixerSessionEnded"
    )
    assert f"): {isolation}" in " ".join(first.stdout.split()), first.stdout
    assert "NO-SELF-MERGE" in first.stdout
    second = ouro("loop", str(corpus), "--fixers", state=tmp_path / "state", **env)
    assert second.returncode == 0
    assert second.stdout == first.stdout
    assert store.head() == events[-1].position  # a second run appends nothing

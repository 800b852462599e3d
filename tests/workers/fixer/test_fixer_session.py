"""A fixer session end to end on a copy of the example forge, with a fake agent command in the sandbox:
it emits stream-json with total_cost_usd, commits on its branch and opens a pull request."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ouroboros_gates.events import SideTables, ensure_schema, make_engine
from ouroboros_gates.events.budget import Budget
from ouroboros_gates.forge import LocalForge
from ouroboros_gates.schemas import FixerOutcome, PrecheckOutcome, PrecheckVerdict
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.fixer import ForgePaths, SessionRun, find_sandbox, plan_session, run_session

ROOT = Path(__file__).resolve().parents[3]
NOON = datetime(2026, 10, 5, 19, 0, tzinfo=UTC)

# The fake agent: what it can see and write is part of what the test checks.
AGENT = """
import json, os, subprocess, sys, time
sys.path.insert(0, {root!r})
from ouroboros_gates.forge import LocalForge
state_visible = os.path.exists({state_probe!r})
def say(cost, **more):
    print(json.dumps({{"type": "result", "subtype": "success", "session_id": "s1",
                      "total_cost_usd": cost, **more}}),
          flush=True)
say(0.25)
say(0.5)
say(0.125)  # the process was reopened: the counter restarts from zero
for step in range({steps}):
    say(0.125 + 0.25 * (step + 1))
time.sleep({linger})  # an agent that goes on working: only the kill at its reservation ends it before its PR
open("miner.txt", "w").write("the new miner\\n")
git = ["git", "-c", "user.name=fixer", "-c", "user.email=fixer@example.invalid"]
subprocess.run([*git, "add", "miner.txt"], check=True)
subprocess.run([*git, "commit", "-q", "-m", "miner: a new miner\\n\\nCSF-Session: s1\\n"], check=True)
head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
forge = LocalForge({forge!r}, {bundle!r}, writes_dir=os.environ["OURO_FORGE_WRITES"])
pull = forge.open_pull_request({{
    "title": "miner: a new miner (#47)", "body": "Closes #47.\\n\\n| Backtest FN | 0 |", "state": "open",
    "draft": {draft}, "labels": ["miner"], "created_at": "2026-10-05T19:05:00+00:00", "base": "main",
    "head_sha": head, "author": "csf-fixer", "head_ref": os.environ["OURO_FIXER_BRANCH"],
    "commits": [{{"sha": head, "message": "miner: a new miner\\n\\nCSF-Session: s1\\n"}}], "checks": [],
}})
print(json.dumps({{"type": "system", "subtype": "note", "pull": pull.number, "state_visible": state_visible,
                  "home": os.environ["HOME"], "leaked": os.environ.get("PYTEST_CURRENT_TEST")}}), flush=True)
"""


INSTANCE = "8c3f1b6e-2a7d-4e90-b5c4-6f1e9a0d2b77"


def _verdict(ticket: int = 47) -> PrecheckVerdict:
    return PrecheckVerdict(
        ticket=ticket,
        proposal=3389917099,
        miner="repeat_failure",
        verdict=PrecheckOutcome.LAUNCH,
        instances_named=(INSTANCE,),
        instances_found=(INSTANCE,),
        reason="names 1 instance in the corpus",
    )


@pytest.fixture
def world(tmp_path: Path) -> dict[str, object]:
    shutil.copytree(ROOT / "examples" / "forge", tmp_path / "shipped" / "forge")
    shutil.copy(ROOT / "examples" / "repo.bundle", tmp_path / "shipped" / "repo.bundle")
    state = tmp_path / "state"
    forge = LocalForge.from_examples(tmp_path / "shipped", state / "forge-cache", writes_dir=state / "forge")
    engine = make_engine(f"sqlite:///{state / 'events.sqlite'}")
    state.mkdir(exist_ok=True)
    ensure_schema(engine)
    return {"state": state, "forge": forge, "engine": engine, "shipped": tmp_path / "shipped"}


def _run(
    world: dict[str, object],
    *,
    steps: int = 0,
    draft: bool = False,
    cap: float = 10.0,
    reserve: float = 1.5,
    fixers: bool = True,
    sandboxed: bool = True,
    linger: float = 0,
) -> SessionRun | str:
    state, forge = world["state"], world["forge"]
    assert isinstance(state, Path) and isinstance(forge, LocalForge)
    script = AGENT.format(
        root=str(ROOT),
        state_probe=str(state / "events.sqlite"),
        steps=steps,
        forge=str(forge.forge_dir),
        bundle=str(forge.repository),
        draft=draft,
        linger=linger,
    )
    settings = Settings(
        state=state,
        fixers=fixers,
        fixer_daily_cap_usd=cap,
        fixer_session_usd=reserve,
        fixer_command=f"{sys.executable} -c {shlex.quote(script)}",
        fixer_hosts="",
    )
    sandbox, _why = find_sandbox()
    assert forge.writes_dir is not None
    return run_session(
        _verdict(),
        settings=settings,
        forge=forge,
        git_dir=forge.git_dir(),
        budget=Budget(SideTables(world["engine"]), cap),  # type: ignore[arg-type]
        sandbox=sandbox if sandboxed else None,
        now=lambda: NOON,
        forge_paths=ForgePaths(reads=forge.forge_dir, writes=forge.writes_dir),
    )


needs_bwrap = pytest.mark.skipif(find_sandbox()[0] is None, reason=find_sandbox()[1])


@needs_bwrap
def test_a_session_runs_sandboxed_folds_its_cost_and_reads_a_ready_pull_request(
    world: dict[str, object],
) -> None:
    run = _run(world)
    assert isinstance(run, SessionRun), run
    session = run.session
    assert (session.outcome, session.pull_request) == (FixerOutcome.READY, 61)
    assert session.cost_usd == pytest.approx(0.625)  # 0.5 + 0.125: the reopened process counted from zero
    assert session.branch == plan_session(_verdict(), world["state"]).branch  # type: ignore[arg-type]
    assert session.branch.startswith("miner/repeat-failure-")
    lines = [json.loads(line) for line in run.log.read_text().splitlines()]
    note = lines[-1]
    assert note["state_visible"] is False and note["leaked"] is None  # the state is hidden, the env cleared
    assert note["home"] == session.worktree
    forge = world["forge"]
    assert isinstance(forge, LocalForge)
    pull = forge.pull_request(61)
    assert forge.has_commit(pull.head_sha) and pull.head_ref == session.branch
    assert Budget(SideTables(world["engine"]), 10.0).day_totals("2026-10-05") == pytest.approx((0.0, 0.625))  # type: ignore[arg-type]


@needs_bwrap
def test_a_draft_pull_request_is_a_draft_outcome(world: dict[str, object]) -> None:
    run = _run(world, draft=True)
    assert isinstance(run, SessionRun) and run.session.outcome is FixerOutcome.DRAFT


@needs_bwrap
def test_the_agent_is_stopped_at_its_reservation(world: dict[str, object]) -> None:
    run = _run(world, steps=20, reserve=1.0, linger=60)
    assert isinstance(run, SessionRun)
    assert run.stopped.startswith("stopped at its reservation")
    assert run.session.cost_usd == pytest.approx(1.125)  # 0.5 + 0.625: the first reading at or past $1.00
    assert run.session.outcome is FixerOutcome.NO_PULL_REQUEST  # stopped before it opened one


@needs_bwrap
def test_one_session_per_ticket_and_the_cap(world: dict[str, object]) -> None:
    assert isinstance(_run(world), SessionRun)
    assert _run(world) == "ticket #47 already had its fixer session"


def test_without_fixers_or_a_sandbox_nothing_launches(world: dict[str, object]) -> None:
    assert _run(world, fixers=False).startswith("fixers are off")  # type: ignore[union-attr]
    refused = _run(world, sandboxed=False)
    assert refused == "no sandbox: fixers launch unattended only when sandboxed launch is available"
    state = world["state"]
    assert isinstance(state, Path) and not (state / "fixers").exists()


def test_the_brief_names_the_instances_the_pre_check_found(world: dict[str, object]) -> None:
    from ouroboros_gates.workers.fixer import brief_for

    state = world["state"]
    assert isinstance(state, Path)
    plan = plan_session(_verdict(), state)
    brief = brief_for(_verdict(), plan)
    assert f"- {INSTANCE}" in brief and plan.branch in brief and "#47" in brief and "Never merge" in brief


def test_without_bwrap_there_is_no_sandbox_and_fixers_say_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on this PATH
    sandbox, why = find_sandbox()
    assert sandbox is None and why.startswith("no sandbox: bubblewrap (bwrap) is not installed")


@needs_bwrap
def test_a_session_whose_worker_was_lost_is_closed_from_its_log_once(world: dict[str, object]) -> None:
    import fcntl

    state, engine = world["state"], world["engine"]
    assert isinstance(state, Path)
    budget = Budget(SideTables(engine), 10.0)  # type: ignore[arg-type]
    assert budget.reserve(47, 1.5, NOON).granted  # the lost worker's reservation, never settled
    plan = plan_session(_verdict(), state)
    plan.log.parent.mkdir(parents=True)
    plan.log.write_text(
        "".join(json.dumps({"session_id": "s", "total_cost_usd": v}) + "\n" for v in (0.25, 0.5, 0.125))
    )
    with (plan.log.parent / "session.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a live session holds its lock: nobody closes it under it
        assert _run(world) == "ticket #47's fixer session is running"
    run = _run(world)
    assert isinstance(run, SessionRun) and run.stopped == "closed after its worker was lost"
    # Its agent died with its worker after reporting $0.625: what it spent since is unknown, so the session
    # is settled at its whole reservation, and says it is an estimate.
    assert run.session.cost_usd == pytest.approx(1.5) and run.session.cost_estimated
    assert run.session.started == NOON and run.session.isolation == find_sandbox()[0].isolation  # type: ignore[union-attr]
    assert run.session.outcome is FixerOutcome.NO_PULL_REQUEST
    assert budget.day_totals("2026-10-05") == pytest.approx((0.0, 1.5))
    assert _run(world) == "ticket #47 already had its fixer session"

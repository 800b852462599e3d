"""The fixer's sandbox, tried from inside as an attacker would (issue 32, items 1-4): ``fixer_attacker.py``
runs as the agent command of a real session (bwrap, the worker's proxy, the budget on SQLite) and reports
what it achieved; each test then checks the host side too. Runs only where bwrap can make the sandbox."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from fake_model_server import FakeModelServer

from ouroboros_gates.events import SideTables, ensure_schema, make_engine
from ouroboros_gates.events.budget import Budget
from ouroboros_gates.forge import LocalForge
from ouroboros_gates.schemas import PrecheckOutcome, PrecheckVerdict
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.fixer import AGENT_UID, ForgePaths, SessionRun, find_sandbox, run_session

ROOT = Path(__file__).resolve().parents[2]
ATTACKER = Path(__file__).with_name("fixer_attacker.py").read_text(encoding="utf-8")
NOON = datetime(2026, 10, 5, 19, 0, tzinfo=UTC)
SECRETS = {
    "OURO_API_TOKEN": "api-token-4c1d",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-9e2f",
    "OURO_DATABASE_URL": "postgresql://fleet:db-secret-7a3b@127.0.0.1/ouro",
}
AS_ROOT = os.getuid() == 0

pytestmark = pytest.mark.skipif(find_sandbox()[0] is None, reason=find_sandbox()[1])


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A copy of the example forge, an empty event log, the worker's environment holding fleet secrets."""
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    shutil.copytree(ROOT / "examples" / "forge", tmp_path / "shipped" / "forge")
    shutil.copy(ROOT / "examples" / "repo.bundle", tmp_path / "shipped" / "repo.bundle")
    state = tmp_path / "state"
    state.mkdir()
    forge = LocalForge.from_examples(tmp_path / "shipped", state / "forge-cache", writes_dir=state / "forge")
    engine = make_engine(f"sqlite:///{state / 'events.sqlite'}")
    ensure_schema(engine)
    markers = tmp_path / "markers"
    markers.mkdir()
    return {"state": state, "forge": forge, "engine": engine, "markers": markers, "tmp": tmp_path}


def _attack(
    world: dict[str, Any],
    config: dict[str, Any],
    *,
    ticket: int = 47,
    hosts: str = "",
    cap: float = 10.0,
    reserve: float = 1.5,
) -> tuple[SessionRun | str, dict[str, Any]]:
    """One real session with the attacker as its agent: the session and the attacker's report."""
    forge: LocalForge = world["forge"]
    assert forge.writes_dir is not None
    config = {
        "markers": str(world["markers"]),
        "origin_git_dir": str(forge.git_dir()),
        "state": str(world["state"]),
        "worker_pid": os.getpid(),
        **config,
    }
    command = f"{sys.executable} -c {shlex.quote(ATTACKER)} {shlex.quote(json.dumps(config))}"
    settings = Settings(
        state=world["state"],
        fixers=True,
        fixer_daily_cap_usd=cap,
        fixer_session_usd=reserve,
        fixer_command=command,
        fixer_hosts=hosts,
    )
    verdict = PrecheckVerdict(
        ticket=ticket,
        proposal=ticket,
        miner="repeat_failure",
        verdict=PrecheckOutcome.LAUNCH,
        instances_named=("x",),
        instances_found=("x",),
        reason="names 1 instance",
    )
    run = run_session(
        verdict,
        settings=settings,
        forge=forge,
        git_dir=forge.git_dir(),
        budget=Budget(SideTables(world["engine"]), cap),
        sandbox=find_sandbox()[0],
        now=lambda: NOON,
        forge_paths=ForgePaths(forge.forge_dir, forge.writes_dir),
    )
    report: dict[str, Any] = {}
    if isinstance(run, SessionRun):
        for line in run.log.read_text().splitlines():
            document = json.loads(line)
            if document.get("subtype") == "attacker":
                report = document["results"]
    return run, report


def _got(report: dict[str, Any], part: str) -> dict[str, Any]:
    section = report[part]
    assert section["ok"], section
    got: dict[str, Any] = section["got"]
    return got


def _leaks(folder: Path) -> list[str]:
    """Marker files a planted payload left, with whether they hold a secret of the worker's environment."""
    return [
        f"{p.name}: {any(v in p.read_text() for v in SECRETS.values())}" for p in sorted(folder.iterdir())
    ]


def test_item1_hooks_and_config_the_agent_plants_never_run_outside(world: dict[str, Any]) -> None:
    origin: Path = world["forge"].git_dir()
    before = ((origin / "config").read_bytes(), sorted(p.name for p in (origin / "hooks").iterdir()))
    run, report = _attack(world, {"try": ["git"]})
    assert isinstance(run, SessionRun), run
    planted = _got(report, "git")
    assert (
        planted["hook post-checkout"]["ok"] and planted["config core.fsmonitor"]["ok"]
    )  # its own clone: planted
    assert planted["commit"]["ok"]
    assert (
        Path(planted["common_dir"]) == Path(run.session.worktree) / ".git"
    )  # not the repository it came from
    assert planted["origin seen"] == {
        "ok": True,
        "got": False,
    }  # the state is hidden: its origin is not there
    if AS_ROOT:  # in a user namespace the folders bwrap made are the agent's: it writes a decoy in memory
        assert not planted["origin hook"]["ok"] and not planted["origin config"]["ok"]
    assert ((origin / "config").read_bytes(), sorted(p.name for p in (origin / "hooks").iterdir())) == before
    # The worker fetched the branch back (sealed); the merge train merges it into main like any other.
    head = subprocess.run(
        ["git", "-C", str(origin), "rev-parse", f"refs/heads/{run.session.branch}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    forge: LocalForge = world["forge"]
    assert {".gitattributes", "evil.txt", ".evil-fsmonitor"} <= set(forge.commit(head).files)
    pull = forge.open_pull_request(
        {
            "title": "attacker",
            "body": "",
            "state": "open",
            "draft": False,
            "labels": [],
            "base": "main",
            "created_at": "2026-10-05T19:05:00+00:00",
            "head_sha": head,
            "author": "csf-fixer",
            "head_ref": run.session.branch,
            "commits": [{"sha": head, "message": "attacker"}],
            "checks": [],
        }
    )
    assert forge.merge(pull.number, head, "merge the attacker")
    # The next launch clones main, which now carries the attacker's .gitattributes filter and hook files.
    second, _ = _attack(world, {"try": []}, ticket=48)
    assert isinstance(second, SessionRun), second
    assert (
        Path(second.session.worktree) / "evil.txt"
    ).read_text() == "smudge me\n"  # checked out, unfiltered
    assert _leaks(world["markers"]) == []
    # Control: the planted hooks are live; plain git in the attacker's clone runs them with its environment.
    control = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(
        ["git", "-c", "safe.directory=*", "-C", run.session.worktree, "checkout", "-q", "-b", "control"],
        env=control,
        capture_output=True,
        check=True,
    )
    leaks = _leaks(world["markers"])
    assert any(leak.startswith("hookspath-post-checkout-") and leak.endswith("True") for leak in leaks), leaks


def test_item2_the_agent_has_no_privilege_and_no_way_to_write_outside(world: dict[str, Any]) -> None:
    outside = [
        f"/etc/ouro-attacker-{os.getpid()}",
        f"/usr/local/ouro-attacker-{os.getpid()}",
        str(ROOT / f"ouro-attacker-{os.getpid()}"),
    ]
    run, report = _attack(world, {"try": ["privilege"], "outside_files": outside})
    assert isinstance(run, SessionRun), run
    got = _got(report, "privilege")
    if AS_ROOT:
        assert (got["uid"], got["euid"], got["gid"], got["groups"]) == (AGENT_UID, AGENT_UID, AGENT_UID, [])
        assert not got["read /etc/shadow"]["ok"]
        assert got["uid_map"]["got"] == ["0", "0", "4294967295"]  # no user namespace: a real uid of its own
    else:  # the worker's uid, in a user namespace of its own that maps that one uid
        assert got["uid"] == os.getuid()
        assert got["uid_map"]["got"][0::2] == [str(os.getuid()), "1"]
    assert run.session.isolation == find_sandbox()[0].isolation  # the session record says which it got
    caps = got["status"]
    assert {caps[k] for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")} == {"0000000000000000"}
    assert (caps["NoNewPrivs"], caps["Seccomp"]) == ("1", "2")
    for attempt in (
        "remount",
        "remount /etc",
        "tmpfs over /etc",
        "unshare -Ur",
        "unshare -Urm",
        "setuid binaries",
    ):
        assert not got[attempt]["ok"] or got[attempt]["got"]["rc"] != 0, (attempt, got[attempt])
    assert not got["setuid 0"]["ok"] and not got["chmod suid"]["ok"]
    for path in outside:
        assert not got[f"write {path}"]["ok"] and not Path(path).exists()
    assert not got["kill worker"]["ok"]  # its own pid namespace: the worker is not there
    # The state shows only the way to its own worktree and the forge's writes: no event log, broker or cache.
    assert got["state"] == {"ok": True, "got": ["fixers", "forge"]}
    assert got["root home"] == {"ok": True, "got": _installation_under(Path("/root"))}
    assert got["run"] == {"ok": True, "got": []}
    leaked = set(got["env"]) & set(SECRETS)
    assert leaked == set()
    assert set(got["env"]) <= {
        "PATH",
        "LANG",
        "LC_ALL",
        "TERM",
        "TZ",
        "HOME",
        "TMPDIR",
        "OURO_FIXER_BRANCH",
        "OURO_FIXER_TICKET",
        "OURO_FORGE_WRITES",
        "OURO_FORGE_DIR",
        "PWD",
        "SHLVL",
        "_",
        "LC_CTYPE",
    }


def _installation_under(folder: Path) -> list[str]:
    """What the sandbox shows again of ``folder``: the first step to the worker's own Python, if it lies
    there."""
    paths = (Path(p).resolve() for p in (sys.base_prefix, sys.prefix, ROOT))
    return sorted({p.relative_to(folder).parts[0] for p in paths if p.is_relative_to(folder)})


def test_item3_the_agent_reaches_the_allow_listed_model_and_nothing_of_the_fleet(
    world: dict[str, Any], redis_server: str, pg_server: str
) -> None:
    redis, pg = urlsplit(redis_server), urlsplit(pg_server)
    # A fleet service on a Unix socket the sandbox can see (the forge's folder is shown read-only, and a
    # read-only mount does not stop a connect): only the seccomp program keeps the agent from it.
    visible = world["forge"].forge_dir / "fleet.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(visible))
    visible.chmod(0o777)
    listener.listen()
    with listener, FakeModelServer() as model:
        allowed = urlsplit(model.url).netloc
        config = {
            "try": ["network"],
            "forbidden": {"redis": [redis.hostname, redis.port], "postgres": ["127.0.0.1", pg.port or 5432]},
            "unix": ["/var/run/postgresql/.s.PGSQL.5432", "/run/postgresql/.s.PGSQL.5432", str(visible)],
            "via_proxy": {
                "redis": f"127.0.0.1:{redis.port}",
                "redis by name": f"localhost:{redis.port}",
                "redis v6": f"[::1]:{redis.port}",
                "redis short": f"127.1:{redis.port}",
                "postgres": f"127.0.0.1:{pg.port or 5432}",
                "model": allowed,
            },
            "redis_url": f"http://127.0.0.1:{redis.port}/",
            "model_url": f"{model.url}/api/tags",
        }
        run, report = _attack(world, config, hosts=allowed)
    assert isinstance(run, SessionRun), run
    got = _got(report, "network")
    for name in ("tcp redis", "tcp postgres", "unix abstract", "dns", *(f"unix {p}" for p in config["unix"])):
        assert not got[name]["ok"], (name, got[name])
    assert (
        "Address family not supported" in got[f"unix {visible}"]["error"]
    )  # refused by seccomp, not by a path
    assert not got["psql"]["ok"] or got["psql"]["got"]["rc"] != 0
    for name in ("redis", "redis by name", "redis v6", "redis short", "postgres"):
        assert got[f"CONNECT {name}"] == {"ok": True, "got": "HTTP/1.1 403 Forbidden"}, name
    assert got["CONNECT model"] == {"ok": True, "got": "HTTP/1.1 200 Connection established"}
    assert not got["GET redis"]["ok"] and "403" in got["GET redis"]["error"]
    assert got["model"]["ok"] and got["model"]["got"].startswith("200 ")  # the one place it may reach
    network = [json.loads(line) for line in run.log.with_name("network.jsonl").read_text().splitlines()]
    assert {a["target"] for a in network if not a["allowed"]} >= {
        f"127.0.0.1:{redis.port}",
        f"localhost:{redis.port}",
    }
    assert {a["target"] for a in network if a["allowed"]} == {allowed}


def test_item3_an_agent_that_needs_no_network_gets_none(world: dict[str, Any], redis_server: str) -> None:
    redis = urlsplit(redis_server)
    config = {
        "try": ["network"],
        "forbidden": {"redis": [redis.hostname, redis.port]},
        "unix": [],
        "via_proxy": {},
    }
    run, report = _attack(world, config, hosts="")
    assert isinstance(run, SessionRun), run
    got = _got(report, "network")
    assert got["proxy"] is None and not got["tcp redis"]["ok"] and not got["dns"]["ok"]
    assert not run.log.with_name("network.jsonl").exists()


def test_item4_a_last_line_past_the_reservation_is_stopped_and_charged_only_the_reservation(
    world: dict[str, Any],
) -> None:
    run, _ = _attack(world, {"costs": [5.0], "linger_s": 60}, cap=2.0, reserve=1.5)
    assert isinstance(run, SessionRun), run
    assert run.stopped == "stopped at its reservation ($5.00 of $1.50)"
    assert not (Path(run.session.worktree) / "survived").exists()  # killed while it lingered
    assert (run.session.cost_usd, run.session.overrun_usd) == (5.0, 3.5)  # the ledger says what it spent
    budget = Budget(SideTables(world["engine"]), 2.0)
    assert budget.day_totals("2026-10-05") == pytest.approx((0.0, 1.5))  # the cap is charged the reservation
    assert budget.day_overrun("2026-10-05") == pytest.approx(3.5)  # and the overrun is a figure of its own
    refused, _ = _attack(world, {}, ticket=48, cap=2.0, reserve=0.25)
    assert refused == "the day's spend would pass the cap of $2.00 (2026-10-05)"  # the day really is over


def test_item4_the_cost_stream_is_watched_as_it_comes(world: dict[str, Any]) -> None:
    run, _ = _attack(world, {"costs": [0.25, 0.75, 1.25, 1.75, 2.5, 3.0, 4.0], "linger_s": 60}, reserve=1.5)
    assert isinstance(run, SessionRun), run
    assert run.stopped == "stopped at its reservation ($1.75 of $1.50)"  # the first reading at or past it
    assert (run.session.cost_usd, run.session.overrun_usd) == (1.75, 0.25)
    readings = [json.loads(line).get("total_cost_usd") for line in run.log.read_text().splitlines()]
    assert [r for r in readings if r is not None] == [0.25, 0.75, 1.25, 1.75]  # nothing read past the stop
    assert Budget(SideTables(world["engine"]), 10.0).day_totals("2026-10-05") == pytest.approx((0.0, 1.5))


def test_item4_spend_an_agent_cut_off_by_the_time_limit_could_not_report_is_settled_at_the_reservation(
    world: dict[str, Any],
) -> None:
    """The task's soft time limit (Celery raises it in the pool child from a signal, as here) strikes while
    the agent lingers after reporting $0.25: the agent is killed, the session closed and recorded, and what
    it spent is taken as its whole reservation, never as the $0.25 (nor as nothing)."""
    fixers = world["state"] / "fixers"

    def strike() -> None:  # once the agent has reported, as the time limit would at any moment
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if any("total_cost_usd" in p.read_text() for p in fixers.glob("*/events.jsonl")):
                os.kill(os.getpid(), signal.SIGUSR1)
                return
            time.sleep(0.1)

    def limit(_signum: int, _frame: object) -> None:
        raise SoftTimeLimitExceeded()

    previous = signal.signal(signal.SIGUSR1, limit)
    watcher = threading.Thread(target=strike, daemon=True)
    watcher.start()
    try:
        run, _ = _attack(world, {"costs": [0.25], "linger_s": 60}, cap=10.0, reserve=1.5)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert isinstance(run, SessionRun), run
    assert run.stopped == "killed at the task's time limit ($0.25 reported before)"
    assert not (Path(run.session.worktree) / "survived").exists()  # the agent died with the limit
    assert (run.session.cost_usd, run.session.overrun_usd, run.session.cost_estimated) == (1.5, 0.0, True)
    assert Budget(SideTables(world["engine"]), 10.0).day_totals("2026-10-05") == pytest.approx((0.0, 1.5))


def test_item4_an_agent_that_fails_after_its_last_reading_is_settled_at_the_reservation(
    world: dict[str, Any],
) -> None:
    run, _ = _attack(world, {"costs": [0.25], "exit": 3}, cap=10.0, reserve=1.5)
    assert isinstance(run, SessionRun), run
    assert run.stopped == "its turn ended (exit 3)"
    assert (run.session.cost_usd, run.session.cost_estimated) == (1.5, True)
    silent, _ = _attack(world, {}, ticket=48, cap=10.0, reserve=1.0)  # ends well, never says what it cost
    assert isinstance(silent, SessionRun), silent
    assert silent.stopped == "its turn ended (no cost reported)"
    assert (silent.session.cost_usd, silent.session.cost_estimated) == (1.0, True)
    told, _ = _attack(world, {"costs": [0.25]}, ticket=49, cap=10.0, reserve=1.0)  # reported, ended well
    assert isinstance(told, SessionRun), told
    assert (told.stopped, told.session.cost_usd, told.session.cost_estimated) == (
        "its turn ended",
        0.25,
        False,
    )
    assert Budget(SideTables(world["engine"]), 10.0).day_totals("2026-10-05") == pytest.approx((0.0, 2.75))

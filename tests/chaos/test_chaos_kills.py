"""The main job survives its worker being killed (issue 32, items 10 and 11): on Redis and PostgreSQL, SIGKILL
of the worker's main process while it decides a push; on the embedded broker, SIGKILL of pool children at any
moment. Each time the loop finishes by itself (the test's own timeout is the bound, never a measured speed),
``ouro status`` shows the dead worker's message in flight and then nothing, and the ledger's content is a
clean run's."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import redis
from fleet_support import ROOT, children, ouro, run

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.chaos, pytest.mark.timeout(900)]

LOOP_BOUND_S = 120  # the bound: the loop finishes inside two minutes of the kill
DIGEST = re.compile(r"ledger digest ([0-9a-f]{16})")


def _env(tmp_path: Path, name: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OURO_")}
    return {**env, "OURO_STATE": str(tmp_path / name), "OURO_ROOTS": str(ROOT), **extra}


def _worker(loop: subprocess.Popen[bytes]) -> int | None:
    """The loop's embedded worker: its child running ``celery ... worker``."""
    for pid in children(loop.pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"celery" in command and b"worker" in command:
            return pid
    return None


def _clean_digest(tmp_path: Path, **extra: str) -> str:
    clean = run("loop", str(ROOT / "examples"), env=_env(tmp_path, "clean", **extra), timeout_s=300)
    assert clean.returncode == 0, clean.stdout[-3000:] + clean.stderr[-2000:]
    found = DIGEST.search(clean.stdout)
    assert found, clean.stdout[-2000:]
    return found.group(1)


def _finished(loop: subprocess.Popen[bytes], log: Path) -> str:
    try:
        code = loop.wait(timeout=LOOP_BOUND_S)
    except subprocess.TimeoutExpired:
        os.killpg(loop.pid, signal.SIGKILL)
        loop.wait()
        raise AssertionError(
            f"the loop did not finish within {LOOP_BOUND_S} s:\n{log.read_text()[-4000:]}"
        ) from None
    said = log.read_text()
    assert code == 0, said[-4000:]
    return said


def _in_flight(env: dict[str, str]) -> dict[str, int]:
    done = run("status", "--json", env=env)
    return {q: n for q, n in json.loads(done.stdout)["in_flight"].items() if n}


def test_a_worker_killed_while_it_decides_does_not_stall_the_loop(
    tmp_path: Path, redis_url: str, pg_url: str
) -> None:
    clean = _clean_digest(tmp_path)
    env = _env(tmp_path, "chaos", OURO_BROKER_URL=redis_url, OURO_DATABASE_URL=pg_url)
    client = redis.Redis.from_url(redis_url)
    log = tmp_path / "loop.log"
    loop = ouro("loop", str(ROOT / "examples"), env=env, log=log)
    deciding = _wait_deciding(client, loop, log)
    victim = _worker(loop)
    assert victim is not None
    os.kill(victim, signal.SIGKILL)  # the main process only, as the OOM killer would
    killed_at = time.monotonic()
    held = _in_flight(env)
    said = _finished(loop, log)
    print(f"\nworker killed deciding {deciding}; the loop ended {time.monotonic() - killed_at:.0f} s later")
    assert held.get("decider", 0) >= 1, (deciding, held)  # the dead worker's message, in flight...
    assert _in_flight(env) == {}  # ...then done
    assert "starting it again" in said
    found = DIGEST.search(said)
    assert found and found.group(1) == clean, said[-3000:]


def _wait_deciding(client: redis.Redis, loop: subprocess.Popen[bytes], log: Path) -> list[str]:
    """Poll Redis until a ``decider.decide`` message is taken and not yet acknowledged."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and loop.poll() is None:
        held = [json.loads(raw) for raw in client.hvals("unacked")]
        taken = [entry[0]["headers"]["id"] for entry in held if entry[2] == "decider"]
        if taken:
            return taken
        time.sleep(0.02)
    raise AssertionError(f"no push was being decided:\n{log.read_text()[-3000:]}")


class ChildKiller(threading.Thread):
    """SIGKILLs one pool child of the loop's worker at random moments, ``kills`` times."""

    def __init__(self, loop: subprocess.Popen[bytes], kills: int, seed: int) -> None:
        super().__init__(daemon=True)
        self.loop, self.kills, self.rng = loop, kills, random.Random(seed)
        self.done: list[int] = []

    def run(self) -> None:
        while len(self.done) < self.kills and self.loop.poll() is None:
            time.sleep(self.rng.uniform(0.2, 2.0))
            worker = _worker(self.loop)
            pool = children(worker) if worker else []
            if pool:
                victim = self.rng.choice(pool)
                try:
                    os.kill(victim, signal.SIGKILL)
                except ProcessLookupError:
                    continue
                self.done.append(victim)


def test_pool_children_killed_at_any_moment_do_not_stall_the_embedded_worker(tmp_path: Path) -> None:
    clean = _clean_digest(tmp_path)
    env = _env(tmp_path, "chaos")
    log = tmp_path / "loop.log"
    loop = ouro("loop", str(ROOT / "examples"), env=env, log=log)
    killer = ChildKiller(loop, kills=6, seed=11)
    killer.start()
    said = _finished(loop, log)
    killer.join(timeout=10)
    print(f"\n{len(killer.done)} pool children killed; the loop ended on its own")
    assert len(killer.done) >= 3, f"only {len(killer.done)} pool children were killed before the loop ended"
    worker_log = (tmp_path / "chaos" / "worker.log").read_text()
    assert worker_log.count("exited with 'signal 9 (SIGKILL)'") >= 3
    assert _in_flight(env) == {}
    found = DIGEST.search(said)
    assert found and found.group(1) == clean, said[-3000:]

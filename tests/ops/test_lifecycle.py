"""How the fleet's processes start and stop: SIGTERM stops ``ouro serve`` with its embedded worker (started
again when it dies), ``ouro worker`` (its running task requeued after OURO_SHUTDOWN_S) and ``ouro beat``;
``ouro status`` fails when the broker or the event log does not answer; a main job whose messages fail for a
reason to fix stops at once with it, and records every dead letter."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import httpx
import pytest
import redis
from fleet_support import ROOT, alive, children, free_port, ouro, poll, run, terminate, wait_http

from ouroboros_gates.events import open_store
from ouroboros_gates.schemas import Probe, content_id
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import build_app, declare_queues, publish

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(420)]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"OURO_DATABASE_URL", "OURO_BROKER_URL"}}
    return {**env, "OURO_STATE": str(tmp_path / "state"), "OURO_ROOTS": str(tmp_path), **extra}


def test_sigterm_stops_serve_and_its_embedded_worker(tmp_path: Path) -> None:
    port = free_port()
    env = _env(tmp_path, OURO_API_PORT=str(port), OURO_LOG_FORMAT="json")
    log = tmp_path / "serve.log"
    serve = ouro("serve", env=env, log=log)
    try:
        wait_http(f"http://127.0.0.1:{port}/api/status", serve, log)
        workers = poll(lambda: [p for p in children(serve.pid) if "worker" in _cmdline(p)], 120, "the worker")
        settings = Settings(state=tmp_path / "state")
        probe = Probe(message_id=content_id("serve", "probe"), probe="through-serve")
        sender = build_app(settings, include=False)
        declare_queues(sender)
        publish(probe, via=sender)
        store = open_store(settings.event_log_url)
        poll(lambda: store.is_handled(probe.TASK, probe.message_id), 120, "the probe", log.read_text)
        httpx.get(f"http://127.0.0.1:{port}/api/status", timeout=30)
        os.kill(workers[0], signal.SIGKILL)  # serve starts its worker again, and the next probe is handled
        workers = poll(
            lambda: [p for p in children(serve.pid) if "worker" in _cmdline(p) and p not in workers],
            120,
            "the worker started again",
            log.read_text,
        )
        again = Probe(message_id=content_id("serve", "again"), probe="after-restart")
        publish(again, via=sender)
        poll(lambda: store.is_handled(again.TASK, again.message_id), 120, "the probe after", log.read_text)
    finally:
        code = terminate(serve)
    assert code == 0, log.read_text()[-3000:]
    assert not any(alive(pid) for pid in workers), "the embedded worker outlived serve"
    # uvicorn's access log, in the fleet's JSON lines, on serve's own output
    access = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert any(r["logger"] == "uvicorn.access" and "/api/status" in r["message"] for r in access)
    # the worker's log: JSON lines, a task's lines carrying its name and id
    lines = [json.loads(line) for line in (tmp_path / "state" / "worker.log").read_text().splitlines()]
    assert any(r.get("task_id") == probe.message_id and r.get("task_name") == probe.TASK for r in lines)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.parametrize("command", ["serve", "loop"])
def test_sigkill_of_the_cli_takes_its_embedded_worker_with_it(tmp_path: Path, command: str) -> None:
    """``ouro serve`` or ``ouro loop`` SIGKILLed (nothing of it runs to stop its worker): the worker gets
    SIGTERM from the kernel and stops, its pool children with it."""
    env = _env(tmp_path, OURO_API_PORT=str(free_port()))
    args = ("serve",) if command == "serve" else ("loop", str(ROOT / "examples" / "runs"))
    log = tmp_path / f"{command}.log"
    parent = ouro(*args, env=env, log=log)
    family: list[int] = []
    try:
        workers = poll(
            lambda: [p for p in children(parent.pid) if "celery" in _cmdline(p) and children(p)],
            120,
            f"{command}'s worker and its pool",
            log.read_text,
        )
        family = [*workers, *(child for worker in workers for child in children(worker))]
        os.kill(parent.pid, signal.SIGKILL)
        assert parent.wait(timeout=30) == -signal.SIGKILL
        poll(
            lambda: not any(alive(pid) for pid in family),
            60,
            f"the worker of a SIGKILLed {command} to stop",
            lambda: (tmp_path / "state" / "worker.log").read_text(errors="replace")[-3000:],
        )
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)
            parent.wait()
        for pid in family:  # an orphan the test found (the worker keeps the parent's process group)
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_sigterm_requeues_a_running_task_after_the_shutdown_time(
    tmp_path: Path, redis_url: str, pg_url: str
) -> None:
    env = _env(tmp_path, OURO_BROKER_URL=redis_url, OURO_DATABASE_URL=pg_url, OURO_SHUTDOWN_S="2")
    log = tmp_path / "worker.log"
    worker = ouro("worker", "-Q", "fleet", "-c", "1", env=env, log=log)
    settings = Settings(broker_url=redis_url, database_url=pg_url)
    sender = build_app(settings, include=False)
    declare_queues(sender)
    publish(Probe(message_id=content_id("shutdown", "long"), probe="long", hold_s=300), via=sender)
    client = redis.Redis.from_url(redis_url)
    try:
        poll(
            lambda: client.hlen("unacked") == 1 and "received" in log.read_text(), 120, "the long probe taken"
        )
    finally:
        code = terminate(worker)
    # It stopped (not killed), and the probe it could not finish is back on its queue for another worker.
    assert code is not None, log.read_text()[-3000:]
    assert client.llen("fleet") == 1 and client.hlen("unacked") == 0, log.read_text()[-3000:]


def test_sigterm_stops_beat(tmp_path: Path, redis_url: str, pg_url: str) -> None:
    log = tmp_path / "beat.log"
    beat = ouro("beat", env=_env(tmp_path, OURO_BROKER_URL=redis_url, OURO_DATABASE_URL=pg_url), log=log)
    poll(lambda: "beat: Starting" in log.read_text(), 120, "beat to start", log.read_text)
    assert terminate(beat) == 0, log.read_text()[-3000:]


def test_status_fails_when_the_broker_or_the_event_log_does_not_answer(tmp_path: Path) -> None:
    nobody = free_port()
    up = run("status", "--json", env=_env(tmp_path))
    assert up.returncode == 0, up.stderr
    report = json.loads(up.stdout)
    assert report["healthy"] and report["in_flight"]["miner"] == 0
    broker_down = run("status", env=_env(tmp_path, OURO_BROKER_URL=f"redis://127.0.0.1:{nobody}/0"))
    assert broker_down.returncode == 1 and "broker unreachable" in broker_down.stderr, broker_down.stderr
    database_down = run(
        "status", env=_env(tmp_path, OURO_DATABASE_URL=f"postgresql+psycopg://127.0.0.1:{nobody}/x")
    )
    assert database_down.returncode == 1 and "event log unreachable" in database_down.stderr, (
        database_down.stderr
    )


def test_a_loop_outside_the_roots_fails_at_once_with_the_reason(tmp_path: Path) -> None:
    corpus = tmp_path / "elsewhere" / "runs"
    shutil.copytree(ROOT / "examples" / "runs", corpus)
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    for attempt in ("first", "again"):  # a second run, nothing fixed, fails the same way
        done = run("loop", str(corpus), env=_env(tmp_path, OURO_ROOTS=str(allowed)))
        assert done.returncode == 1, (attempt, done.stdout[-2000:], done.stderr[-2000:])
        said = " ".join(done.stdout.split())  # the console wraps long lines (a long temporary path)
        assert "outside the configured roots" in said and "set OURO_ROOTS" in said, attempt
    settings = Settings(state=tmp_path / "state")
    dead = [e for e in open_store(settings.event_log_url).read_stream("fleet/dead-letter")]
    assert dead and all(e.type == "MessageDeadLettered" and e.payload["permanent"] for e in dead)
    # Every message parked on the dead-letter queue is recorded (a redelivered one is parked again, recorded
    # once).
    assert _parked(settings) == {e.payload["message_id"] for e in dead}
    fixed = run("loop", str(corpus), env=_env(tmp_path))
    assert fixed.returncode == 0, fixed.stdout[-3000:] + fixed.stderr[-2000:]


def _parked(settings: Settings) -> set[str]:
    """The message ids on the embedded broker's dead-letter queue (taken off it)."""
    parked: set[str] = set()
    with build_app(settings, include=False).connection_for_read() as conn:
        queue = conn.SimpleQueue("dead_letter")
        while True:
            try:
                message = queue.get(timeout=1)
            except queue.Empty:
                return parked
            parked.add(message.payload[0][0]["message"]["message_id"])
            message.ack()

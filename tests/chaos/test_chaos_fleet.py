"""10,000 messages through real Redis and PostgreSQL and two real worker processes while workers are
SIGKILLed, Redis is killed and restarted and PostgreSQL drops every session: afterwards the ledger is the
clean run's, no event is duplicated, no message is lost, and the dead-letter queue holds exactly the
poison messages sent."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis
from _chaos import (
    REDIS_SERVER,
    Mix,
    PrivateRedis,
    clean_run,
    drop_pg_sessions,
    iterate_children,
    ledger_digest,
    message_mix,
    retrying,
)
from _fleet import Fleet
from sqlalchemy import text

from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import catch_up, digest, rebuild
from ouroboros_gates.schemas import content_id
from ouroboros_gates.schemas.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.chaos, pytest.mark.timeout(900)]

TOTAL, RUNS, POISON, INVALID = 10_000, 1_000, 40, 40
SEED = 9
WORKERS = 2
STALL_S = 60.0
RESEND_S = 25.0


@dataclass
class Faults:
    """What was done to the fleet during the run."""

    worker_kills: int = 0
    child_kills: int = 0
    redis_restarts: int = 0
    pg_drops: int = 0
    sessions_dropped: int = 0
    resent: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed")
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    server.kill()


def _handled(fleet: Fleet) -> dict[str, int]:
    with fleet.store.reading() as conn:
        rows = conn.execute(text("SELECT consumer, COUNT(*) FROM ouro_handled_messages GROUP BY consumer"))
        return {str(consumer): int(count) for consumer, count in rows}


def _done(counts: dict[str, int], mix: Mix) -> bool:
    return (
        counts.get("fleet.probe", 0) == mix.probes
        and counts.get("miner.ingest", 0) == mix.runs
        and counts.get("miner.mine", 0) == mix.runs
        and counts.get("fleet.dead_letter", 0) == len(mix.poison)
        and counts.get("fleet.probe:rejected", 0) == mix.invalid
    )


def _key(task: str, payload: object) -> str:
    """The message id a worker records a payload under (the shell's key for a payload it rejects)."""
    given = payload.get("message_id") if isinstance(payload, dict) else None
    if isinstance(given, str) and 8 <= len(given) <= 128:
        return given
    return content_id("rejected", task, repr(payload)[:10_000])


def _progress(counts: dict[str, int]) -> int:
    return sum(counts.values())


class Chaos(threading.Thread):
    """Strikes at points spread over the run (a random fraction of the work apart): SIGKILLs a whole
    worker (and starts a new one) or only its pool child, drops every PostgreSQL session, or kills and
    restarts Redis; meanwhile keeps the ledger caught up and the outbox relayed, as the API's catch-up
    loop and beat do."""

    PLAN = (
        "worker",
        "postgres",
        "child",
        "redis",
        "worker",
        "postgres",
        "child",
        "worker",
        "redis",
        "postgres",
        "child",
        "worker",
    )

    def __init__(self, fleet: Fleet, server: PrivateRedis, pg_url: str, mix: Mix, expected: int) -> None:
        super().__init__(daemon=True)
        self.fleet, self.server, self.pg_url, self.mix = fleet, server, pg_url, mix
        self.faults = Faults()
        self.stop = threading.Event()
        self.rng = random.Random(SEED)
        step = expected / (len(self.PLAN) + 1)
        self.points = sorted(
            int(step * (i + 1) + self.rng.uniform(-0.3, 0.3) * step) for i in range(len(self.PLAN))
        )
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # reported by the test, not lost in the thread
            self.error = exc

    def _loop(self) -> None:
        plan, rounds, seen, still, resent = list(self.PLAN), 0, -1, 0.0, False
        while not self.stop.wait(0.5):
            rounds += 1
            try:
                counts = _handled(self.fleet)
                if rounds % 4 == 0:
                    catch_up(self.fleet.store, PROJECTIONS)
            except Exception as exc:  # the faults themselves; the next round tries again
                self.faults.log.append(f"observer: {type(exc).__name__}")
                continue
            if _done(counts, self.mix):
                return
            # Every message redelivered within the visibility timeout: a standstill once the faults are over
            # means the broker lost messages. The producer sends again what no worker recorded (as one with
            # an outbox would); a second standstill is a loss the fleet caused.
            still = 0.0 if _progress(counts) != seen else still + 0.5
            seen = _progress(counts)
            if not plan and still > RESEND_S and not resent and self._broker_idle():
                self._resend_unrecorded()
                resent, still = True, 0.0
            elif still > STALL_S:
                self._dump_stacks()
                return
            if plan and _progress(counts) >= self.points[len(self.PLAN) - len(plan)]:
                self._strike(plan.pop(0))
            if rounds % 6 == 0:
                self._relay()

    def _strike(self, fault: str) -> None:
        alive = [p for p in self.fleet.workers if p.poll() is None]
        if fault == "worker":
            victim = self.rng.choice(alive)
            os.killpg(victim.pid, signal.SIGKILL)  # the worker and its pool child, mid-task or not
            victim.wait()
            self.fleet.start_worker(name="w")
            self.faults.worker_kills += 1
        elif fault == "child":
            children = list(iterate_children(self.rng.choice(alive).pid))
            if children:
                os.kill(children[0], signal.SIGKILL)  # the parent forks a new one; the message is requeued
                self.faults.child_kills += 1
        elif fault == "redis":
            self.server.restart(down_s=self.rng.uniform(1.0, 3.0))
            self.faults.redis_restarts += 1
        else:
            self.faults.sessions_dropped += drop_pg_sessions(self.pg_url)
            self.faults.pg_drops += 1

    def _dump_stacks(self) -> None:
        """Every worker process writes its threads' stacks to its log (Celery's SIGUSR1 handler in the main
        process, the fleet's SIGUSR2 one in the pool child), so a standstill shows where each one waits."""
        for worker in self.fleet.workers:
            if worker.poll() is None:
                signals = [
                    (worker.pid, signal.SIGUSR1),
                    *((c, signal.SIGUSR2) for c in iterate_children(worker.pid)),
                ]
                for pid, number in signals:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, number)
        time.sleep(2)

    def _broker_idle(self) -> bool:
        """Nothing queued and nothing unacknowledged (waiting for its redelivery)."""
        try:
            client = self.server.client()
            return not client.hlen("unacked") and not any(client.llen(q) for q in ("fleet", "miner"))
        except redis.RedisError:
            return False

    def _resend_unrecorded(self) -> None:
        with self.fleet.store.reading() as conn:
            recorded = {str(m) for (m,) in conn.execute(text("SELECT message_id FROM ouro_handled_messages"))}
        for task, queue, payload in self.mix.payloads:
            if _key(task, payload) not in recorded:
                self.fleet.send(task, payload, queue=queue, task_id=_key(task, payload))
                self.faults.resent.append(_key(task, payload))

    def _relay(self) -> None:
        try:  # beat's outbox sweep: follow-ups whose publish failed while Redis was down
            self.fleet.sender.send_task("fleet.relay_outbox", queue="fleet")
        except Exception as exc:  # Redis may be down right now
            self.faults.log.append(f"relay: {type(exc).__name__}")


def test_ten_thousand_messages_survive_kills_restarts_and_dropped_sessions(
    tmp_path: Path, pg_url: str, private_redis: PrivateRedis
) -> None:
    mix = message_mix(tmp_path, TOTAL, RUNS, POISON, INVALID, SEED)
    settings = Settings(state=tmp_path / "state", roots=str(tmp_path))
    reference = clean_run(mix, settings, f"sqlite:///{tmp_path / 'clean.sqlite'}")
    clean_digest, clean_rows = ledger_digest(reference)
    clean_events = reference.head()

    fleet = Fleet(
        tmp_path,
        private_redis.url,
        pg_url,
        OURO_MAX_RETRIES="30",
        OURO_RETRY_BACKOFF_S="0.1",
        OURO_RETRY_BACKOFF_MAX_S="2",
        OURO_OUTBOX_REDELIVER_S="30",
    )
    started = time.monotonic()
    try:
        for task, queue, payload in mix.payloads:  # the task id is the message's key: the logs name it
            fleet.send(task, payload, queue=queue, task_id=_key(task, payload))
        for _ in range(WORKERS):
            fleet.start_worker(name="w")
        expected = mix.probes + 2 * mix.runs + len(mix.poison) + mix.invalid
        chaos = Chaos(fleet, private_redis, pg_url, mix, expected)
        chaos.start()
        chaos.join(timeout=780)
        chaos.stop.set()
        assert chaos.error is None, f"the fault injector failed: {chaos.error!r}"
        counts = retrying(lambda: _handled(fleet))
        assert _done(counts, mix), (
            f"not every message was handled: {counts}; {_broker_state(fleet, private_redis)}"
        )
        elapsed = time.monotonic() - started
        dead_letters = [json.loads(raw) for raw in private_redis.client().lrange("dead_letter", 0, -1)]
        logs = "".join(path.read_text(errors="replace") for path in tmp_path.glob("w-*.log"))
        redelivered = logs.count("publishing it again")
        # A message sent again was lost by the broker before any worker took it (kombu's Redis transport pops
        # a message, then writes its unacknowledged copy: a kill in between loses it), never by a worker.
        # Received once (the copy sent again) is a broker loss; received before that too is a worker's loss.
        taken = [key for key in chaos.faults.resent if logs.count(f"[{key}] received") > 1]
        assert taken == [], f"messages a worker received and lost: {taken}"
    finally:
        fleet.stop()
    faults = chaos.faults
    assert (faults.worker_kills, faults.redis_restarts, faults.pg_drops) == (
        4,
        2,
        3,
    ) and faults.child_kills >= 1, faults

    store = fleet.store
    retrying(lambda: catch_up(store, PROJECTIONS))
    live = digest(store, PROJECTIONS)
    assert rebuild(store, PROJECTIONS) and digest(store, PROJECTIONS) == live  # the live fold is a clean fold
    assert ledger_digest(store) == (clean_digest, clean_rows)
    assert store.head() == clean_events  # nothing appended twice, nothing missing
    with store.reading() as conn:
        repeated = conn.execute(
            text(
                "SELECT stream, type, COUNT(*) FROM ouro_events WHERE type IN ('ProbeCompleted', "
                "'RunRecorded')"
                " GROUP BY stream, type HAVING COUNT(*) > 1"
            )
        ).fetchall()
    assert repeated == []
    parked = sorted(json.loads(_body(d))[0][0]["message"]["message_id"] for d in dead_letters)
    # Exactly the poison, each parked: a kill between parking and the ack could park one twice (the queue
    # is at-least-once too), which the recorded MessageDeadLettered, once per message, tells apart.
    assert set(parked) == mix.poison
    with store.reading() as conn:
        recorded = conn.execute(
            text("SELECT COUNT(*) FROM ouro_events WHERE type = 'MessageDeadLettered'")
        ).scalar()
    assert recorded == len(mix.poison)
    print(
        f"\nchaos: {TOTAL} messages sent ({mix.probes} probes, {mix.runs} ingests + {mix.runs} mines, "
        f"{len(mix.poison)} poison, {mix.invalid} invalid), {WORKERS} workers, {elapsed:.0f} s; "
        f"{faults.worker_kills} worker kills, {faults.child_kills} pool-child kills, "
        f"{faults.redis_restarts} Redis restarts, {faults.pg_drops} PostgreSQL drops "
        f"({faults.sessions_dropped} sessions); events {store.head()} = clean {clean_events}; "
        f"dead letters parked {len(parked)}, recorded {recorded}, poison {len(mix.poison)}; "
        f"follow-ups unrecorded 30 s after publishing, published again from the outbox {redelivered}; "
        f"messages lost by the broker and sent again by the producer {len(faults.resent)}"
    )


def _broker_state(fleet: Fleet, server: PrivateRedis) -> str:
    """Where the missing messages could be: outbox entries not published, queues, unacknowledged."""
    client = server.client()
    pending = [(e.task, e.message_id, e.attempts) for e in retrying(fleet.store.pending_outbox)]
    queues = {name: client.llen(name) for name in ("fleet", "miner", "dead_letter")}
    blocked = [c["cmd"] for c in client.client_list() if "b" in c["flags"]]  # consumers waiting in BRPOP
    workers = "\n".join(_worker_state(p, fleet.tmp / f"w-{i}.log") for i, p in enumerate(fleet.workers))
    return (
        f"outbox pending {pending}; queues {queues}; unacked {client.hlen('unacked')}; "
        f"clients blocked {blocked}\n{workers}"
    )


def _worker_state(process: subprocess.Popen[bytes], log: Path) -> str:
    """A worker's exit status (None: running) and the last lines of its log but rejections and the local
    variables of a stack dump."""
    lines = [
        line
        for line in log.read_text(errors="replace").splitlines()
        if "rejected message" not in line and not line.startswith((" '", "{'"))
    ]
    tail = "\n  ".join(line[:300] for line in lines[-120:])
    return f"{log.name} pid {process.pid} exit {process.poll()}:\n  {tail}"


def _body(message: dict[str, object]) -> str:
    """The task arguments of a kombu message on a Redis list (base64 JSON)."""
    import base64

    return base64.b64decode(str(message["body"])).decode()

"""What the chaos suite injects and checks: a private Redis to kill, PostgreSQL sessions to drop, the
message mix, a clean sequential run to compare with, and the ledger's digest without log positions."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import redis
from pydantic import ValidationError

from ouroboros_gates.events import Metadata, SqlEventStore, StreamWrite, ensure_schema
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import catch_up, content_digest
from ouroboros_gates.schemas import IngestRun, Message, MessageDeadLettered, Probe, content_id
from ouroboros_gates.schemas.errors import PermanentError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.fleet import probe
from ouroboros_gates.workers.miner.tasks import accept, ingest, mine
from ouroboros_gates.workers.shell import Context, reject

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "runs"
REDIS_SERVER = shutil.which("redis-server")


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrivateRedis:
    """A redis-server of the test's own, with every write fsynced to its append-only file, so that a
    SIGKILL of the server loses nothing it acknowledged; the shared Redis is never touched."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0

    def start(self) -> None:
        """Start (or restart) the server on the same port and data directory."""
        assert REDIS_SERVER is not None
        argv = [
            REDIS_SERVER,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.folder),
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--daemonize",
            "no",
        ]
        log = (self.folder / "redis.log").open("ab")
        self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1)
        deadline = time.monotonic() + 30
        while True:
            try:
                if client.ping():
                    return
            except redis.RedisError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL the server: no shutdown save, only what the append-only file already holds survives."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self, down_s: float) -> None:
        """Kill, stay down ``down_s`` seconds, start again."""
        self.kill()
        time.sleep(down_s)
        self.start()
        self.restarts += 1

    def client(self) -> redis.Redis:
        """A client of this server."""
        return redis.Redis.from_url(self.url, socket_timeout=5)


def drop_pg_sessions(database_url: str) -> int:
    """Terminate every other session on the test's database (the workers', the projector's, the
    test's own pool); returns how many were dropped."""
    plain = database_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True, connect_timeout=5) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return sum(1 for (done,) in rows if done)


@dataclass(frozen=True)
class Mix:
    """The messages one chaos run sends, and what each kind must leave behind."""

    payloads: list[tuple[str, str, Any]]  # (task, queue, payload)
    probes: int
    runs: int
    poison: frozenset[str]  # message ids that must end on the dead-letter queue
    invalid: int  # payloads that must each become one MessageRejected


def message_mix(folder: Path, total: int, runs: int, poison: int, invalid: int, seed: int) -> Mix:
    """``total`` messages: probes, ``runs`` copies of the example runs to ingest (each asks for a mine
    through the outbox), ``poison`` ingests that fail for good, and ``invalid`` payloads."""
    import random

    sources = sorted(EXAMPLES.glob("*/events.jsonl"))
    items: list[tuple[str, str, Any]] = []
    for i in range(runs):
        target = folder / "runs" / f"run-{i:05d}" / "events.jsonl"
        target.parent.mkdir(parents=True)
        shutil.copyfile(sources[i % len(sources)], target)
        message = IngestRun(
            message_id=content_id("chaos-ingest", str(i)), path=str(target.parent), run=f"run-{i:05d}"
        )
        items.append((message.TASK, "miner", message.to_json_dict()))
    dead: set[str] = set()
    for i in range(poison):
        path = "/etc/hostname" if i % 2 else str(folder / "runs" / f"missing-{i}")
        message = IngestRun(message_id=content_id("chaos-poison", str(i)), path=path, run=f"poison-{i:04d}")
        items.append((message.TASK, "miner", message.to_json_dict()))
        dead.add(message.message_id)
    for i in range(invalid):
        bad: Any = {"message_id": content_id("chaos-invalid", str(i)), "probe": f"bad-{i}", "hold_s": "soon"}
        items.append((Probe.TASK, "fleet", bad if i % 2 else [i, "not an object"]))
    probes = total - len(items)
    for i in range(probes):
        probe_ = Probe(message_id=content_id("chaos-probe", str(i)), probe=f"p-{i:06d}")
        items.append((probe_.TASK, "fleet", probe_.to_json_dict()))
    random.Random(seed).shuffle(items)
    return Mix(items, probes, runs, frozenset(dead), invalid)


def clean_run(mix: Mix, settings: Settings, database_url: str) -> SqlEventStore:
    """The same messages handled one at a time in this process with nothing failing: the reference."""
    store = SqlEventStore.from_url(database_url)
    ensure_schema(store.engine)
    ctx = Context(settings, store, "clean")
    tasks: dict[str, tuple[type[Message], Callable[[Any, Context], Any]]] = {
        t.name: (t.message_type, t.handler) for t in (probe, ingest, accept, mine)
    }
    queue = [(task, payload) for task, _, payload in mix.payloads]
    while queue:
        task, payload = queue.pop(0)
        kind, handler = tasks[task]
        try:
            message = kind.model_validate(payload)
        except ValidationError as exc:
            reject(ctx, task, payload, exc)
            continue
        try:
            outcome = handler(message, ctx)
        except PermanentError as exc:
            event = MessageDeadLettered(
                task=task,
                message_id=message.message_id,
                attempts=1,
                error_type=type(exc).__name__,
                error=f"{type(exc).__name__}: {exc}"[:2000],
            )
            meta = Metadata(
                producer="fleet.dead_letter", message_id=message.message_id, tenant=message.tenant
            )
            store.commit([StreamWrite("fleet/dead-letter", [event])], meta)
            continue
        store.commit(outcome.writes, Metadata.for_message(task, message), outcome.follow_ups)
        queue.extend((m.TASK, m.to_json_dict()) for m in outcome.follow_ups)
    catch_up(store, PROJECTIONS)
    return store


def ledger_digest(store: SqlEventStore) -> tuple[str, int]:
    """The projections' content without log positions and times (two runs interleave their messages
    differently, so positions differ; everything else must not), and the row count."""
    return content_digest(store, PROJECTIONS)


def retrying(action: Callable[[], Any], attempts: int = 50, pause_s: float = 0.2) -> Any:
    """``action()``, retried while the database or broker is briefly gone (the chaos the test causes)."""
    for attempt in range(attempts):
        try:
            return action()
        except Exception:  # the event log's TransientError or a broker error, while a fault is in force
            if attempt == attempts - 1:
                raise
            time.sleep(pause_s)
    return None


def iterate_children(pid: int) -> Iterator[int]:
    """The pool children of a worker process."""
    path = Path(f"/proc/{pid}/task/{pid}/children")
    if path.exists():
        yield from (int(p) for p in path.read_text().split())

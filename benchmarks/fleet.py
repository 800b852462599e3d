"""Fleet benchmark: harness events ingested end to end through real Celery workers on Redis and PostgreSQL,
beside a no-op Celery task on the same Redis in the same run (the engine's own ceiling).

Ours: the harness events are cut into runs of ``--run-events`` lines (copies of the example runs), one
``IngestRun`` per run; each worker reads the run, summarises it, appends ``RunRecorded`` with the
handled-message row, and asks through the outbox for a ``MineRun``, which runs every accepted miner and
appends the findings. Timed from the first publish to the last run mined (every message handled, read
back from the log). Peer: the same number of messages to a task that does nothing, on the fleet's
own Celery settings (``workers.app.configure``: acks late, prefetch 1, JSON, task events), the same number
of worker processes, the same Redis; timed from the first publish until the queue is empty and nothing is
unacknowledged.

Both sides run ``--workers`` worker processes of one pool child each, started and warmed before the clock
starts; the peer goes first, then ours, round by round. Redis is a private ``redis-server`` on a free port
(``--redis-url`` to use another); PostgreSQL is a fresh database ``ouro_bench_fleet_<pid>``, dropped after.
Peak RSS is each process's high-water mark (``VmHWM``): the worker's main process and its pool child.
CPU per message is read from ``/proc`` over the timed part of each round, summed over the workers: their
main processes, their pool children, and (ours, when the server is on this host) PostgreSQL's backends
serving the bench database.

A run is the fleet's unit of ingestion (a hook spools a session's events and publishes the run once);
``--run-events`` defaults to 40, about the median of the real sessions in ``../shared/corpora`` (15, 39
and 96 transcript lines; 34 hook payloads).

Run: ``.venv/bin/python benchmarks/fleet.py [--events N] [--run-events K] [--workers W] [--rounds R]``.
The last lines: each round's ratio and the CPU each side spent per message in all its measured processes
(a round's throughput moves with the machine's moment, its CPU much less); our end-to-end events/s against
the no-op's messages/s (what an operator gets: a run is the fleet's unit of ingestion); and last the
target's ratio, messages/s like for like (each of ours does real work: a run read, summarised, recorded,
or mined by every miner), target 0.5 or more.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import redis
from _databases import fresh_pg_database
from _markdown import add_markdown_option, against, write_block
from celery import Celery
from sqlalchemy import text

from ouroboros_gates.events import SqlEventStore, ensure_schema
from ouroboros_gates.schemas import IngestRun, content_id
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import build_app, declare_queues
from ouroboros_gates.workers.app import configure

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "runs"
NOOP_QUEUE = "bench_noop"


def noop_app(broker_url: str) -> Celery:
    """The peer: one task that does nothing, on the fleet's own Celery settings (``workers.app.configure``:
    acks late, reject on worker lost, prefetch 1, JSON, the transport options, and the task events Flower
    shows, which every task of ours sends too)."""
    app = configure(Celery("bench-noop"), Settings(broker_url=broker_url, polling_interval_s=0.1))
    app.conf.update(
        task_default_queue=NOOP_QUEUE, task_routes={"bench.noop": {"queue": NOOP_QUEUE}}, beat_schedule={}
    )

    @app.task(name="bench.noop")  # type: ignore[untyped-decorator]
    def noop(payload: Any) -> None:
        return None

    return app


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _redis(given: str | None, folder: Path) -> Iterator[str]:
    if given:
        yield given
        return
    server = shutil.which("redis-server")
    if server is None:
        raise SystemExit("redis-server is not installed: pass --redis-url")
    port = _free_port()
    argv = [
        server,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(folder),
    ]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        _until(lambda: _pings(url), 30, "redis-server")
        yield url
    finally:
        process.kill()
        process.wait()


def _pings(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def _until(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit(f"timed out after {timeout:.0f} s waiting for {what}")


def make_runs(folder: Path, events: int, per_run: int) -> list[Path]:
    """Runs of ``per_run`` harness lines (the example runs' lines, in order, wrapped round), ``events`` in
    all."""
    lines = [
        line for path in sorted(EXAMPLES.glob("*/events.jsonl")) for line in path.read_text().splitlines()
    ]
    runs: list[Path] = []
    made, cursor = 0, 0
    while made < events:
        size = min(per_run, events - made)
        chunk = [lines[(cursor + i) % len(lines)] for i in range(size)]
        cursor += size
        path = folder / f"bench-{len(runs):06d}" / "events.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("\n".join(chunk) + "\n")
        runs.append(path.parent)
        made += size
    return runs


class Workers:
    """``count`` worker processes of one pool child each; their peak RSS read before they stop."""

    def __init__(self, argv: list[str], env: dict[str, str], count: int, log: Path) -> None:
        self.processes = [
            subprocess.Popen(
                [*argv, "-n", f"bench{i}-{os.getpid()}@%h"],
                env=env,
                cwd=ROOT,
                start_new_session=True,
                stdout=log.open("ab"),
                stderr=subprocess.STDOUT,
            )
            for i in range(count)
        ]

    def peaks_mib(self) -> list[tuple[float, float]]:
        """(main, pool child) VmHWM in MiB for each worker."""
        return [(_hwm(p.pid), max([_hwm(c) for c in _children(p.pid)] or [0.0])) for p in self.processes]

    def cpu_s(self) -> tuple[float, float]:
        """CPU seconds so far, (main processes, pool children), summed over the workers."""
        mains = sum(_cpu_s(p.pid) for p in self.processes)
        return mains, sum(_cpu_s(c) for p in self.processes for c in _children(p.pid))

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, 15)
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, 9)
                process.wait()


def _hwm(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pg_cpu_s(store: SqlEventStore) -> float:
    """CPU seconds of the PostgreSQL backends on the bench database but this one (0 for a server
    elsewhere)."""
    if store.engine.url.host not in ("127.0.0.1", "localhost", "::1"):
        return 0.0
    with store.reading() as conn:
        pids = conn.execute(
            text(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid()"
            )
        ).scalars()
        return sum(_cpu_s(int(pid)) for pid in pids)


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _celery_argv(app: str, queues: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        app,
        "worker",
        "-Q",
        queues,
        "-c",
        "1",
        "-l",
        "WARNING",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]


def run_peer(broker: str, messages: int, workers: int, folder: Path) -> tuple[float, Peaks, Cpu]:
    """Seconds for ``messages`` no-op tasks, the workers' peaks, and their CPU seconds over those."""
    app = noop_app(broker)
    client = redis.Redis.from_url(broker)
    env = {**os.environ, "OURO_BENCH_BROKER": broker}
    argv = [sys.executable, str(Path(__file__).resolve()), "--noop-worker"]
    fleet = Workers(argv, env, workers, folder / "noop.log")
    try:
        for i in range(workers * 4):  # warm: every worker has connected and taken a task
            app.send_task("bench.noop", args=[{"warm": i}], queue=NOOP_QUEUE)
        _until(lambda: client.llen(NOOP_QUEUE) == 0 and client.hlen("unacked") == 0, 120, "the no-op workers")
        payload = {"message_id": "x" * 32, "path": str(folder), "run": "bench-000000", "tenant": "default"}
        cpu = fleet.cpu_s()
        started = time.perf_counter()
        with app.producer_or_acquire() as producer:
            for _ in range(messages):
                app.send_task("bench.noop", args=[payload], queue=NOOP_QUEUE, producer=producer)
        _until(
            lambda: client.llen(NOOP_QUEUE) == 0 and client.hlen("unacked") == 0, 3600, "the no-op messages"
        )
        seconds, (main, child) = time.perf_counter() - started, fleet.cpu_s()
        return seconds, fleet.peaks_mib(), (main - cpu[0], child - cpu[1], 0.0)
    finally:
        fleet.stop()


def _handled(store: SqlEventStore) -> dict[str, int]:
    with store.reading() as conn:
        rows = conn.execute(text("SELECT consumer, COUNT(*) FROM ouro_handled_messages GROUP BY consumer"))
        return {str(k): int(v) for k, v in rows}


Peaks = list[tuple[float, float]]
Cpu = tuple[float, float, float]
"""CPU seconds over a round's timed part: the workers' main processes, their pool children, PostgreSQL."""


def run_ours(
    broker: str, database: str, runs: list[Path], workers: int, folder: Path, round_: int
) -> tuple[float, Peaks, Cpu]:
    """Seconds to ingest and mine every run, the workers' peaks, and the CPU seconds spent over those."""
    state = folder / "state"
    env = {
        **os.environ,
        "OURO_BROKER_URL": broker,
        "OURO_DATABASE_URL": database,
        "OURO_STATE": str(state),
        "OURO_ROOTS": str(folder),
        "OURO_POLLING_INTERVAL_S": "0.1",
    }
    settings = Settings(broker_url=broker, database_url=database, state=state, roots=str(folder))
    sender = build_app(settings, include=False)
    declare_queues(sender)
    store = SqlEventStore.from_url(database)
    ensure_schema(store.engine)
    fleet = Workers(
        _celery_argv("ouroboros_gates.workers.app", "fleet,miner"), env, workers, folder / "fleet.log"
    )
    try:
        warm = [
            IngestRun(
                message_id=content_id("bench-warm", str(round_), str(i)),
                path=str(runs[i % len(runs)]),
                run=f"warm-{round_}-{i}",
            )
            for i in range(workers * 2)
        ]
        base = _handled(store).get("miner.mine", 0)
        for message in warm:
            sender.send_task(message.TASK, args=[message.to_json_dict()], queue="miner")
        _until(lambda: _handled(store).get("miner.mine", 0) >= base + len(warm), 300, "the fleet workers")
        base = _handled(store).get("miner.mine", 0)
        cpu, pg = fleet.cpu_s(), _pg_cpu_s(store)
        started = time.perf_counter()
        with sender.producer_or_acquire() as producer:
            for i, run in enumerate(runs):
                message = IngestRun(
                    message_id=content_id("bench", str(round_), str(i)),
                    path=str(run),
                    run=f"r{round_}-{run.name}",
                )
                sender.send_task(
                    message.TASK, args=[message.to_json_dict()], queue="miner", producer=producer
                )
        _until(lambda: _handled(store).get("miner.mine", 0) >= base + len(runs), 3600, "the runs to be mined")
        seconds, (main, child) = time.perf_counter() - started, fleet.cpu_s()
        return seconds, fleet.peaks_mib(), (main - cpu[0], child - cpu[1], _pg_cpu_s(store) - pg)
    finally:
        fleet.stop()
        store.close()


def _peaks(peaks: list[tuple[float, float]]) -> str:
    return ", ".join(f"{main:.0f} + {child:.0f} MiB" for main, child in peaks)


def _per_message(cpu: Cpu, messages: int) -> str:
    main, child, pg = (1000 * seconds / messages for seconds in cpu)
    postgres = f", PostgreSQL {pg:.2f} ms" if pg else ""
    return f"CPU per message: worker main {main:.2f} ms, pool child {child:.2f} ms{postgres}"


class Round(NamedTuple):
    """One side's round: seconds for every message, the workers' peaks, the CPU spent over those seconds."""

    seconds: float
    peaks: Peaks
    cpu: Cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000, help="harness events (lines) to ingest")
    parser.add_argument("--run-events", type=int, default=40, help="lines per run (one IngestRun each)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes on each side")
    parser.add_argument("--rounds", type=int, default=1, help="peer then ours, this many times")
    parser.add_argument("--redis-url", default=None, help="a Redis to use instead of a private redis-server")
    parser.add_argument(
        "--pg-url",
        default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
        help="a PostgreSQL server (a fresh database is created on it and dropped)",
    )
    parser.add_argument("--noop-worker", action="store_true", help=argparse.SUPPRESS)
    add_markdown_option(parser)
    args, extra = parser.parse_known_args(argv)
    if extra and not args.noop_worker:
        parser.error(f"unrecognised arguments: {' '.join(extra)}")
    if args.noop_worker:  # the peer's worker process
        noop_app(os.environ["OURO_BENCH_BROKER"]).worker_main(
            [
                "worker",
                "-Q",
                NOOP_QUEUE,
                "-c",
                "1",
                "-l",
                "WARNING",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                *extra,
            ]
        )
        return
    with tempfile.TemporaryDirectory(prefix="ouro-bench-fleet-") as tmp:
        folder = Path(tmp)
        runs = make_runs(folder / "runs", args.events, args.run_events)
        messages = 2 * len(runs)  # an IngestRun and its MineRun per run
        print(
            f"{args.events:,} harness events in {len(runs):,} runs ({messages:,} messages), {args.workers} "
            "workers"
        )
        peers: list[Round] = []
        ours: list[Round] = []
        with _redis(args.redis_url, folder) as broker, fresh_pg_database(args.pg_url, "fleet") as database:
            for round_ in range(args.rounds):
                peers.append(peer := Round(*run_peer(broker, messages, args.workers, folder)))
                print(
                    f"round {round_ + 1} peer (no-op task): {messages / peer.seconds:,.0f} messages/s; "
                    f"peak RSS per worker (main + pool child): {_peaks(peer.peaks)}; "
                    f"{_per_message(peer.cpu, messages)}"
                )
                ours.append(mine := Round(*run_ours(broker, database, runs, args.workers, folder, round_)))
                print(
                    f"round {round_ + 1} ours: {args.events / mine.seconds:,.0f} events/s, "
                    f"{messages / mine.seconds:,.0f} messages/s; peak RSS per worker (main + pool child): "
                    f"{_peaks(mine.peaks)}; {_per_message(mine.cpu, messages)}"
                )
    last = summary(peers, ours, args.events, messages)
    write_block(
        args.markdown,
        "fleet",
        ["measure", "ours", "no-op task", "ratio"],
        _rows(peers, ours, args.events, messages, len(runs)),
        last,
    )
    print(last)


def summary(peers: list[Round], ours: list[Round], events: int, messages: int) -> str:
    """Print each round's ratio with the CPU per message, and events/s against the no-op's messages/s; return
    the last line, messages/s like for like."""
    ours_s, peer_s = sum(r.seconds for r in ours), sum(r.seconds for r in peers)
    ours_cpu, peer_cpu = sum(sum(r.cpu) for r in ours), sum(sum(r.cpu) for r in peers)
    ratios = [peer.seconds / mine.seconds for peer, mine in zip(peers, ours, strict=True)]
    ours_rate, peer_rate = len(ours) * messages / ours_s, len(peers) * messages / peer_s
    per_message = 1000 / (len(ours) * messages)
    print(
        f"rounds like for like: {', '.join(f'{r:.2f}x' for r in ratios)}; CPU per message, every measured "
        f"process: ours {ours_cpu * per_message:.2f} ms vs no-op {peer_cpu * per_message:.2f} ms "
        f"({ours_cpu / peer_cpu:.1f}x)"
    )
    events_rate = len(ours) * events / ours_s
    print(
        f"events/s ours end to end {events_rate:,.0f} vs no-op messages/s {peer_rate:,.0f}: "
        f"{events_rate / peer_rate:.2f}x"
    )
    return (
        f"messages/s ours {ours_rate:,.0f} vs no-op {peer_rate:,.0f} (like for like): "
        f"{ours_rate / peer_rate:.2f}x (target >= 0.5x)"
    )


def _rows(peers: list[Round], ours: list[Round], events: int, messages: int, runs: int) -> list[list[str]]:
    """The table: messages/s like for like (each round's when there are several), events/s, CPU per message
    by process, and the largest peak RSS of a worker's processes."""
    count, done = len(ours) * messages, len(ours) * events / sum(r.seconds for r in ours)
    ours_rate, peer_rate = (count / sum(r.seconds for r in side) for side in (ours, peers))
    ours_cpu, peer_cpu = (
        [1000 * sum(r.cpu[i] for r in side) / count for i in range(3)] for side in (ours, peers)
    )
    ours_peak, peer_peak = (
        [max(w[i] for r in side for w in r.peaks) for i in range(2)] for side in (ours, peers)
    )
    rows = [
        [
            f"messages/s like for like ({messages:,} a round: {runs:,} runs, an IngestRun and a MineRun "
            "each), "
            f"{len(ours)} round(s)",
            *against(ours_rate, peer_rate, "messages/s", 0),
        ]
    ]
    if len(ours) > 1:
        rows += [
            [
                f"round {n}, messages/s",
                *against(messages / mine.seconds, messages / peer.seconds, "messages/s", 0),
            ]
            for n, (peer, mine) in enumerate(zip(peers, ours, strict=True), 1)
        ]
    rows.append(
        [
            f"harness events/s end to end ({events:,} events) against the no-op's messages/s",
            f"{done:,.0f} events/s",
            f"{peer_rate:,.0f} messages/s",
            f"{done / peer_rate:.2f}x",
        ]
    )
    rows.append(["CPU per message, every measured process", *against(sum(ours_cpu), sum(peer_cpu), "ms")])
    rows += [
        [f"CPU per message, {what}", *against(ours_cpu[i], peer_cpu[i], "ms")]
        for i, what in enumerate(("the workers' main processes", "their pool children"))
    ]
    postgres = f"{ours_cpu[2]:.2f} ms" if ours_cpu[2] else "not read (the server is on another host)"
    rows.append(["CPU per message, PostgreSQL's backends serving the bench database", postgres, "—", "—"])
    rows += [
        [f"peak RSS of a worker's {what}, the largest", *against(ours_peak[i], peer_peak[i], "MiB", 0)]
        for i, what in enumerate(("main process", "pool child"))
    ]
    return rows


if __name__ == "__main__":
    main()

"""``ouro pre-push`` as git runs it: the push decided in the hook's own process against the same push decided
through a decider worker, in the same run, wall time of the whole command each.

    .venv/bin/python benchmarks/prepush.py [--repeat 3] [--redis URL] [--llm] [--delay 0.3] [--k 3]

A throwaway repository gets a base commit and head commits adding five functions our instruments flag (five
candidates each); every run pushes a head of its own, so nothing is decided twice. The ways:

- ``here``: ``--via here``, the decider worker's core in the hook's process (the default on the embedded
  broker, and wherever no running worker serves the decider queue);
- ``worker started``: ``--via queue`` on the embedded broker: the push through the outbox to a decider worker
  that the command starts for it and stops afterwards (what every push paid before);
- ``running worker`` (with ``--redis URL``): ``--via auto`` while a worker started beforehand serves the
decider
  queue on that Redis (the command asks the broker which queues are served, then waits for the worker).

The program is the $0 default (memory vote) unless ``--llm``: the LM program over the scripted model server
answering every call after ``--delay`` seconds, ``--k`` samples (also timed alone, in process, beside the
sequential sum of its calls). Each way's decisions are compared with the others' (same lines). The last line
is the ratio of the median ``here`` time to each worker way's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _markdown import add_markdown_option, against, write_block  # noqa: E402
from fake_model_server import FakeModelServer  # noqa: E402

from ouroboros_gates.decider.program import OperatingPoint, Program  # noqa: E402

OURO = str(Path(sys.executable).parent / "ouro")
HEAD_CODE = """import os
import subprocess


def export(month):
    subprocess.run("tar czf " + month + ".tgz reports/" + month, shell=True)


def run_report(name):
    return os.popen("report " + name).read()


def find(conn, term):
    return conn.execute(f"SELECT * FROM items WHERE name = '{term}'").fetchall()


def read_invoice(name):
    return open(os.path.join("/srv/invoices", name)).read()


def settings():
    password = "s3cr3t-prod-value"
    return {"password": password}
"""
ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.invalid",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.invalid",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env={**os.environ, **ENV}, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def make_repo(root: Path, heads: int) -> tuple[Path, str, list[str]]:
    """The repository, its base commit, and ``heads`` head commits on top of it (one per push)."""
    repo = root / "bench"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("bench\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    found = []
    for number in range(heads):
        git(repo, "checkout", "-q", "--detach", base)
        (repo / "app.py").write_text(HEAD_CODE + f"\n# push {number}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"head {number}")
        found.append(git(repo, "rev-parse", "HEAD"))
    return repo, base, found


BY = {"here": "this process", "queue": "a decider worker started for the push", "auto": "the decider worker"}
"""Who decides the push, by ``--via``, as ``ouro pre-push`` says it."""


def pre_push(repo: Path, base: str, head: str, via: str) -> tuple[float, str]:
    """Wall seconds of ``ouro pre-push --via VIA`` on one ref, and what it printed; exits unless the push was
    decided the way ``BY`` expects."""
    line = f"refs/heads/main {head} refs/heads/main {base}\n"
    argv = [OURO, "pre-push", "origin", "x", "--repo", str(repo), "--via", via, "--mode", "advisory"]
    start = time.perf_counter()
    done = subprocess.run(argv, input=line, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0 or f"1 of 1 ref(s) decided by {BY[via]}" not in done.stderr:
        raise SystemExit(f"ouro pre-push --via {via} failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return seconds, done.stderr


def decisions(output: str) -> list[str]:
    """The decision lines, without their rationale (the same decision, wherever it was made)."""
    return sorted(
        " ".join(line.split()[:5]) for line in output.splitlines() if line.startswith(("BLOCK", "ADVISORY"))
    )


@contextmanager
def running_worker(root: Path) -> Iterator[None]:
    """A decider worker on the broker of ``OURO_BROKER_URL``, serving before the block starts."""
    from ouroboros_gates.ops.pushes import worker_serves
    from ouroboros_gates.schemas.settings import load_settings

    log = (root / "worker.log").open("ab")
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "ouroboros_gates.workers.app",
        "worker",
        "-Q",
        "decider",
        "-c",
        "1",
        "-n",
        "bench-decider@%h",
        "-l",
        "WARNING",
        "--without-gossip",
        "--without-mingle",
    ]
    worker = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ))
    try:
        settings, end = load_settings(), time.monotonic() + 60
        while not worker_serves(settings):
            if time.monotonic() > end or worker.poll() is not None:
                raise SystemExit(f"the decider worker did not start: see {root / 'worker.log'}")
        yield
    finally:
        worker.terminate()
        worker.wait(timeout=60)


def measure(
    ways: dict[str, str], repo: Path, base: str, heads: list[str], repeat: int
) -> dict[str, list[float]]:
    """Each way ``repeat`` times, interleaved (a busy machine disturbs every way alike); exits if two ways
    decide differently."""
    times: dict[str, list[float]] = {name: [] for name in ways}
    seen: dict[str, list[str]] = {}
    pending = iter(heads)
    for _ in range(repeat):
        for name, via in ways.items():
            seconds, output = pre_push(repo, base, next(pending), via)
            times[name].append(seconds)
            seen[name] = decisions(output)
    first = next(iter(seen.values()))
    if any(found != first for found in seen.values()):
        raise SystemExit(f"the ways decided differently: {seen} (benchmark void)")
    print(f"decisions, the same each way: {len(first)} ({', '.join(line.split()[0] for line in first)})")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="pushes per way; the median counts")
    parser.add_argument("--redis", help="a Redis URL: add the way through a worker already running on it")
    parser.add_argument("--llm", action="store_true", help="the LM program over the scripted model server")
    parser.add_argument("--delay", type=float, default=0.3, help="--llm: seconds the model takes per call")
    parser.add_argument("--k", type=int, default=3, choices=(1, 3, 5), help="--llm: samples per candidate")
    add_markdown_option(parser)
    args = parser.parse_args()
    llm_rows: list[list[str]] = []
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
        root = Path(tmp)
        ways = {"here": "here", "worker started": "queue"}
        repo, base, heads = make_repo(root, args.repeat * (len(ways) + bool(args.redis)))
        os.environ.update({"OURO_STATE": str(root / "state"), "OURO_ROOTS": str(root)})
        for name in ("OURO_MODEL", "OURO_EMBED_MODEL", "OURO_DATABASE_URL", "OURO_BROKER_URL"):
            os.environ.pop(name, None)
        if args.llm:
            llm_rows.append(llm_program(root, server, args.delay, args.k, repo, base, heads[0]))
        times = measure(ways, repo, base, heads[: len(ways) * args.repeat], args.repeat)
        if args.redis:
            os.environ["OURO_BROKER_URL"] = args.redis
            with running_worker(root):
                times |= measure({"running worker": "auto"}, repo, base, heads[-args.repeat :], args.repeat)
    program = (
        f"LM program (k = {args.k}, {args.delay * 1000:.0f} ms a call)" if args.llm else "memory vote ($0)"
    )
    rows, last = report(times, program, args.repeat)
    write_block(args.markdown, "prepush", ["measure", "ours", "peer", "ratio"], [*rows, *llm_rows], last)
    print(last)


WAYS = {
    "worker started": "a decider worker it starts (`--via queue`)",
    "running worker": "a decider worker already running (`--via auto`)",
}
"""The peer of each row, by the way's name."""


def report(times: dict[str, list[float]], program: str, repeat: int) -> tuple[list[list[str]], str]:
    """Print each way's median and runs; return a row per worker way (``here`` against it) and the last
    line."""
    print(f"ouro pre-push, one ref, five candidates, {program}; wall s, median of {repeat} (all runs)")
    for name, seconds in times.items():
        print(f"  {name:<16}{statistics.median(seconds):>8.2f}   ({', '.join(f'{s:.2f}' for s in seconds)})")
    here = statistics.median(times["here"])
    others = {name: statistics.median(seconds) for name, seconds in times.items() if name != "here"}
    rows = [
        [
            f"`ouro pre-push`, {program}, median of {repeat}: here against {WAYS[name]}",
            *against(here, median, "s"),
        ]
        for name, median in others.items()
    ]
    return rows, "ratio " + ", ".join(
        f"here / {name}: {here / median:.2f}" for name, median in others.items()
    )


def llm_program(
    root: Path, server: FakeModelServer, delay: float, k: int, repo: Path, base: str, head: str
) -> list[str]:
    """Switch to the LM program over the scripted server; print its in-process decide time beside the
    sequential sum of its calls (the calls run 8 at a time), and return that as the table's row."""
    from ouroboros_gates.decider.push import decide_repository
    from ouroboros_gates.schemas.settings import load_settings

    answer = {
        "verdict": "vulnerable",
        "family": "x",
        "confidence": 0.9,
        "rationale": "Line 6 runs it.",
        "cited_lines": [6, 10, 14, 18, 22],
    }
    server.script([], default={"content": answer, "delay_s": delay})
    program = Program(kind="llm-program", k=k, operating_points={"*": OperatingPoint(advisory=0.5)})
    (root / "program.json").write_text(program.to_json())
    os.environ.update(
        {
            "OURO_MODEL": "local",
            "OURO_MODEL_URL": server.url + "/v1",
            "OURO_DECIDER_PROGRAM": str(root / "program.json"),
        }
    )
    start = time.perf_counter()
    run, _ = decide_repository(load_settings(), repo, "bench/repo", head, base, store=None)
    seconds = time.perf_counter() - start
    calls = len([r for r in server.requests if r["method"] == "POST"])
    print(
        f"decide in process: {len(run.decided)} candidates, {calls} model calls, {seconds:.2f} s against a "
        f"sequential sum of {calls * delay:.2f} s (ratio {seconds / (calls * delay):.2f})"
    )
    what = (
        f"decide in process, LM program k = {k}: {len(run.decided)} candidates, {calls} calls of "
        f"{delay:.1f} s"
    )
    return [f"{what}, against their sequential sum", *against(seconds, calls * delay, "s")]


if __name__ == "__main__":
    main()

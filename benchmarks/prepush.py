"""``ouro pre-push`` on a 5-candidate push against the scripted model server answering every call after
300 ms: decided inside the deadline, the wall time printed beside the sequential sum of the calls.

    .venv/bin/python benchmarks/prepush.py [--delay 0.3] [--k 3]

A throwaway repository gets a base commit and a head commit adding five functions that our instruments
flag (five candidates). The LM program (``--k`` samples, at most 8 requests in flight) decides them twice:
in process (``decide`` alone), and through ``ouro pre-push`` as git would run it (the push recorded, the
decider worker started on the embedded broker, the decisions read back). The last line is the ratio of
the in-process decide wall time to the sequential sum.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fake_model_server import FakeModelServer  # noqa: E402

from ouroboros_gates.decider.program import OperatingPoint, Program  # noqa: E402

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
ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "b",
       "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@example.invalid"}  # fmt: skip


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env={**os.environ, **ENV}, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def make_repo(root: Path) -> tuple[Path, str, str]:
    repo = root / "bench"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("bench\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "app.py").write_text(HEAD_CODE)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "head")
    return repo, base, git(repo, "rev-parse", "HEAD")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, default=0.3)
    parser.add_argument("--k", type=int, default=3, choices=(1, 3, 5))
    args = parser.parse_args()
    answer = {"verdict": "vulnerable", "family": "x", "confidence": 0.9, "rationale": "Line 6 runs it.",
              "cited_lines": [6, 10, 14, 18, 22]}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
        server.script([], default={"content": answer, "delay_s": args.delay})
        root = Path(tmp)
        repo, base, head = make_repo(root)
        program = Program(kind="llm-program", k=args.k, operating_points={"*": OperatingPoint(advisory=0.5)})
        (root / "program.json").write_text(program.to_json())
        env = {"OURO_STATE": str(root / "state"), "OURO_ROOTS": str(root), "OURO_MODEL": "local",
               "OURO_MODEL_URL": server.url + "/v1", "OURO_DECIDER_PROGRAM": str(root / "program.json")}  # fmt: skip
        os.environ.update(env)
        from ouroboros_gates.decider.push import decide_repository
        from ouroboros_gates.schemas.settings import load_settings

        start = time.perf_counter()
        run, _ = decide_repository(load_settings(), repo, "bench/repo", head, base, store=None)
        decide_s = time.perf_counter() - start
        calls = len([r for r in server.requests if r["method"] == "POST"])
        line = f"refs/heads/main {head} refs/heads/main {base}\n"
        start = time.perf_counter()
        ouro = [str(Path(sys.executable).parent / "ouro"), "pre-push", "origin", "x", "--repo", str(repo)]
        done = subprocess.run(ouro, input=line, capture_output=True, text=True, env={**os.environ, **env}, check=False)
        push_s = time.perf_counter() - start
    undecided = sum(d.decision.undecided is not None for d in run.decided)
    print(f"candidates: {len(run.decided)} ({undecided} undecided); model calls: {calls} at {args.delay * 1000:.0f} ms "
          f"each, k = {args.k}")  # fmt: skip
    print(f"sequential sum of the calls: {calls * args.delay:.2f} s")
    print(f"decide in process (8 in flight): {decide_s:.2f} s")
    print(f"ouro pre-push end to end (push recorded, worker started, decisions read back): {push_s:.2f} s, "
          f"exit {done.returncode}, {done.stderr.count('ADVISORY')} ADVISORY line(s); deadline 30 s")  # fmt: skip
    print(f"ratio decide / sequential sum: {decide_s / (calls * args.delay):.2f}")


if __name__ == "__main__":
    main()

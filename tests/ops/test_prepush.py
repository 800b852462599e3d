"""``ouro pre-push`` speaks git's pre-push protocol: a real ``git push`` runs the hook, the push is
recorded (``PushReceived``), the decider worker decides it through the queue, the ledger holds the rows,
and a BLOCK refuses the push in blocking mode; a push not decided by the deadline never blocks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from ouroboros_gates.decider.program import OperatingPoint, Program
from ouroboros_gates.events import SqlEventStore
from ouroboros_gates.events.projections.decisions import decisions
from ouroboros_gates.ops.cli import app
from ouroboros_gates.ops.pushes import parse_pre_push
from ouroboros_gates.schemas import NULL_COMMIT as NEW
from ouroboros_gates.schemas.errors import OuroError

ROOT = Path(__file__).resolve().parents[2]
BASE, HEAD = "d2c05fd5733b717d6cedfc14f763d00fbdb94b92", "374fdc42a6f08d4e0d87c07a7921acd59048b00e"
OURO = str(Path(sys.executable).parent / "ouro")


def test_pre_push_lines_are_parsed_and_deletions_skipped() -> None:
    lines = [f"refs/heads/main {HEAD} refs/heads/main {BASE}", f"(delete) {NEW} refs/heads/old {BASE}", ""]
    (push,) = parse_pre_push(lines, "acme/shop", "/repo")
    assert (push.ref, push.base, push.head, push.path) == ("refs/heads/main", BASE, HEAD, "/repo")
    with pytest.raises(OuroError, match="stdin:1"):
        parse_pre_push(["refs/heads/main abc"], "acme/shop", None)


@pytest.fixture
def pushing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clone of the example repository at push 2's base, with a bare remote and the hook installed."""
    remote, repo = tmp_path / "remote.git", tmp_path / "shop"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(ROOT / "examples" / "repo.bundle"), str(remote)], check=True
    )
    subprocess.run(["git", "-C", str(remote), "update-ref", "refs/heads/main", BASE], check=True)
    subprocess.run(["git", "clone", "-q", str(remote), str(repo)], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "fetch", "-q", str(ROOT / "examples" / "repo.bundle"), HEAD], check=True
    )
    subprocess.run(["git", "-C", str(repo), "reset", "-q", "--hard", HEAD], check=True)
    hook = repo / ".git" / "hooks" / "pre-push"
    hook.write_text(f'#!/bin/sh\nexec "{OURO}" pre-push "$@"\n')
    hook.chmod(0o755)
    monkeypatch.setenv("OURO_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("OURO_ROOTS", str(tmp_path))
    for name in ("OURO_MODEL", "OURO_MODEL_URL", "OURO_EMBED_MODEL", "OURO_DATABASE_URL", "OURO_BROKER_URL"):
        monkeypatch.delenv(name, raising=False)
    return repo


def git_push(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), "push", "origin", "main"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )


def test_a_real_git_push_is_refused_on_a_block_from_the_lm_program(
    pushing: Path, model_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = Program(
        kind="llm-program",
        k=1,
        operating_points={"*": OperatingPoint(advisory=0.4, block=0.8, block_offered=True)},
    )
    (tmp_path / "program.json").write_text(program.to_json())
    monkeypatch.setenv("OURO_DECIDER_PROGRAM", str(tmp_path / "program.json"))
    monkeypatch.setenv("OURO_MODEL", "local")
    monkeypatch.setenv("OURO_MODEL_URL", model_server.url + "/v1")
    yes = {
        "verdict": "vulnerable",
        "family": "x",
        "confidence": 0.9,
        "rationale": "Line 51 splices the term.",
        "cited_lines": [51],
    }
    no = {
        "verdict": "not_vulnerable",
        "family": "x",
        "confidence": 0.8,
        "rationale": "see line 1",
        "cited_lines": [],
    }
    model_server.script([{"contains": "def search_products", "content": yes}], default={"content": no})
    done = git_push(pushing)
    assert done.returncode != 0, done.stderr
    assert "BLOCK" in done.stderr and "search_products" in done.stderr and "push refused" in done.stderr
    store = SqlEventStore.from_url(f"sqlite:///{tmp_path / 'state' / 'events.sqlite'}")
    kinds = [e.type for e in store.read_stream(f"push/{HEAD}")]
    assert kinds[0] == "PushReceived" and "DecisionMade" in kinds
    with store.reading() as conn:
        ledger = list(conn.execute(select(decisions).where(decisions.c.pin == HEAD)).mappings())
    assert any(r["action"] == "BLOCK" and r["function"] == "search_products" for r in ledger)
    remote_head = subprocess.run(
        ["git", "-C", str(tmp_path / "remote.git"), "rev-parse", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert remote_head == BASE  # the push did not land


def test_a_new_ref_is_decided_from_the_parent_of_its_first_commit_no_remote_has(pushing: Path) -> None:
    from ouroboros_gates.ops.pushes import new_ref_base

    assert new_ref_base(pushing, HEAD) == BASE
    assert new_ref_base(pushing, BASE) == BASE  # nothing new: nothing to decide


def test_memory_vote_advisory_and_the_deadline(pushing: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(
        "OURO_ROOTS"
    )  # the checkout is outside the working directory: the embedded worker may read it
    line = f"refs/heads/main {HEAD} refs/heads/main {BASE}\n"
    runner = CliRunner()
    late = runner.invoke(
        app, ["pre-push", "origin", "x", "--repo", str(pushing), "--deadline", "0.01"], input=line
    )
    assert late.exit_code == 0 and "undecided: deadline" in late.output  # never blocks, never dropped
    benign = f"refs/heads/orders {BASE} refs/heads/orders 31eb1b31d23fe1c2d715d2ec93a6523570ecb3aa\n"
    args = ["pre-push", "origin", "x", "--repo", str(pushing), "--mode", "advisory"]
    decided = runner.invoke(app, args, input=line + benign)
    assert decided.exit_code == 0, decided.output
    assert "ADVISORY" in decided.output and "Memory vote" in decided.output and "DROP" not in decided.output
    assert "refs/heads/orders 31eb1b3..d2c05fd: no candidate" in decided.output
    assert "2 of 2 ref(s) decided" in decided.output


def test_the_main_jobs_example_pushes_are_decided_once_through_the_queue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rich.console import Console

    from ouroboros_gates.events import ensure_schema
    from ouroboros_gates.ops.loop.pushes import decide_step, forge_pushes
    from ouroboros_gates.ops.loop.summary import print_decisions
    from ouroboros_gates.schemas.settings import Settings

    for name in (
        "OURO_MODEL",
        "OURO_EMBED_MODEL",
        "OURO_DATABASE_URL",
        "OURO_BROKER_URL",
        "OURO_DECIDER_PROGRAM",
    ):
        monkeypatch.delenv(name, raising=False)
    settings = Settings(state=tmp_path / "state", forge=str(ROOT / "examples"))
    store = SqlEventStore.from_url(settings.event_log_url)
    ensure_schema(store.engine)
    assert len(forge_pushes(settings)) == 3
    assert decide_step(store, settings).left == {}  # the forge's repository: no checkout named
    assert decide_step(store, settings).left == {}  # a second run publishes nothing
    console = Console(record=True, width=200)
    print_decisions(store, settings, console)
    text = console.export_text()
    assert "Decisions on the example pushes: 3 — memory-vote program (no chat model configured), $0" in text
    assert "push 1 31eb1b3..d2c05fd: no candidate(s)" in text
    assert "ADVISORY" in text and "search_products" in text and "Memory vote" in text
    assert sum(1 for e in store.read_stream(f"push/{HEAD}") if e.type == "PushReceived") == 1


@pytest.mark.parametrize("via", ["here", "queue"])
def test_a_checkout_outside_the_roots_is_decided_with_the_environment_left_alone(
    pushing: Path, monkeypatch: pytest.MonkeyPatch, via: str
) -> None:
    monkeypatch.delenv("OURO_ROOTS")  # the checkout is outside the working directory, the only root
    line = f"refs/heads/main {HEAD} refs/heads/main {BASE}\n"
    args = ["pre-push", "origin", "x", "--repo", str(pushing), "--mode", "advisory", "--via", via]
    done = CliRunner().invoke(app, args, input=line)
    assert done.exit_code == 0, done.output
    assert (
        "ADVISORY" in done.output and "1 of 1 ref(s) decided" in done.output
    )  # the worker read the checkout
    assert (
        "OURO_ROOTS" not in os.environ
    )  # the roots reached the decider as settings, not through the environment

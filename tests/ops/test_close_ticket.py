"""``ouro close-ticket`` and ``ouro train`` on a copy of the example forge: the gate's rules, its comment,
its event, and the train's once-per-head ledger."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_cli import ouro

from ouroboros_gates.events import SqlEventStore
from ouroboros_gates.forge import LocalForge, PullRequest
from ouroboros_gates.workers.merger import close_verdict

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def shipped(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLES / "forge", tmp_path / "shipped" / "forge")
    shutil.copy(EXAMPLES / "repo.bundle", tmp_path / "shipped" / "repo.bundle")
    return tmp_path / "shipped"


def _run(shipped: Path, *args: str) -> tuple[int, str]:
    done = ouro(*args, state=shipped.parent / "state", OURO_FORGE=str(shipped))
    return done.returncode, done.stdout + done.stderr


def _pull(body: str, state: str = "merged") -> PullRequest:
    shipped = LocalForge(EXAMPLES / "forge", EXAMPLES / "repo.bundle").pull_request(52)
    return PullRequest(**{**shipped.__dict__, "body": body, "state": state})


def test_dry_run_names_the_missing_row_and_exits_1(shipped: Path) -> None:
    assert _run(shipped, "close-ticket", "--dry-run", "46", "59") == (
        1,
        "the pull request body has no | Backtest FN | row\n",
    )
    assert _run(shipped, "close-ticket", "--dry-run", "38", "52") == (
        0,
        "Backtest FN 0; every check row exited 0\n",
    )
    assert _run(shipped, "close-ticket", "--dry-run", "47", "60") == (
        1,
        "pull request #60 is open, not merged\n",
    )
    assert not (shipped.parent / "state" / "forge").exists()  # a dry run writes nothing


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("| Backtest FN | 1: #58 |\n| Check | Command | Exit |\n| a | `a` | 0 |", "| Backtest FN | 1: #58 |"),
        ("| Backtest FN | 0 |", "no | Check | Command | Exit | table"),
        (
            "| Backtest FN | 0 |\n\n| Check | Command | Exit |\n| --- | --- | --- |\n| ruff | `ruff check` "
            "| 0 |\n"
            "| miner_test | `pytest` | 1 |",
            "| miner_test | `pytest` | 1 |: the check did not exit 0",
        ),
    ],
)
def test_the_gate_refuses_a_missed_offense_or_a_failing_check_row(body: str, reason: str) -> None:
    verdict = close_verdict(_pull(body))
    assert not verdict.ok and reason in verdict.reason


def test_a_failing_row_is_commented_once_and_the_ticket_stays_open(shipped: Path) -> None:
    for _ in range(2):
        code, out = _run(shipped, "close-ticket", "41", "56")
        assert code == 1 and "#41 stays open" in out and "| miner_test |" in out
    forge = LocalForge.from_examples(
        shipped, shipped.parent / "c", writes_dir=shipped.parent / "state" / "forge"
    )
    kept = [c.body for c in forge.comments(41) if c.body.startswith("The close-ticket gate")]
    assert len(kept) == 1 and "`python -m pytest miners/sleep_poll -q` | 1 |" in kept[0]
    assert forge.ticket(41).state == "open"


def test_train_then_close_ticket_closes_with_an_event(shipped: Path) -> None:
    code, out = _run(shipped, "train")
    assert code == 0, out
    assert "Merge train: 1 merged, 2 refused" in out
    assert "close-ticket gate: #47 closed on #60" in out
    again_code, again = _run(shipped, "train")
    assert again_code == 0 and "Merge train: 0 merged, 0 refused" in again  # every head was tried once
    code, out = _run(shipped, "close-ticket", "38", "52")
    assert (code, out) == (0, "#38 closed on #52: Backtest FN 0; every check row exited 0\n")
    store = SqlEventStore.from_url(f"sqlite:///{shipped.parent / 'state' / 'events.sqlite'}")
    types = [e.type for e in store.read(limit=100)]
    assert (
        types.count("MergeAttempted") == 3 and types.count("Merged") == 1 and types.count("MergeRefused") == 2
    )
    closed = [e.payload for e in store.read(limit=100) if e.type == "TicketClosed"]
    assert [(c["ticket"], c["pull_request"]) for c in closed] == [(47, 60), (38, 52)]
    written = json.loads((shipped.parent / "state" / "forge" / "tickets" / "38.json").read_text())
    assert written["state"] == "closed"
    assert (
        json.loads((shipped / "forge" / "tickets" / "38.json").read_text())["state"] == "open"
    )  # never modified

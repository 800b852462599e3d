"""The merge train over a copy of the example forge: order, once per head, one refusal comment,
NO-SELF-MERGE."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ouroboros_gates.forge import Commit, LocalForge, PullRequest
from ouroboros_gates.schemas import MergeOutcome
from ouroboros_gates.workers.merger import GateResult, checks_gate, ready_pulls, run_train, self_merge_lines

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
T0 = datetime(2026, 10, 5, 12, 0, tzinfo=UTC)
IDENTITY = "ouroboros-merger/31337"


@pytest.fixture
def forge(tmp_path: Path) -> LocalForge:
    shutil.copytree(EXAMPLES / "forge", tmp_path / "forge")
    shutil.copy(EXAMPLES / "repo.bundle", tmp_path / "repo.bundle")
    return LocalForge.from_examples(tmp_path, tmp_path / "cache", writes_dir=tmp_path / "writes")


def _pull(*messages: str) -> PullRequest:
    commits = tuple(Commit.parse(str(i) * 40, message) for i, message in enumerate(messages, 1))
    return PullRequest(
        number=7,
        title="t",
        body="",
        state="open",
        draft=False,
        labels=(),
        created_at=T0,
        base="main",
        head_sha=commits[-1].sha,
        author="a",
        commits=commits,
        checks=(),
    )


@pytest.mark.parametrize(
    "footer",
    [
        "CSF-Session: ouroboros-merger/31337",
        "csf-session: ouroboros-merger/31337",
        "CSF-SESSION:ouroboros-merger/31337",
        "CSF-Session :   ouroboros-merger/31337  ",
        "CSF-Session: 3e7b1f5d-9c2a-4d84-a6f3-8b0e5d2c7a41\nCSF-Session: ouroboros-merger/31337",
        "CSF-Model: claude-opus-4-5\nCSF-Session: Ouroboros-Merger/31337",
        "CSF-Session: ouroboros-merger/4242",  # the merger's identity under another process
    ],
)
def test_a_commit_carrying_the_merger_identity_is_self_merge(footer: str) -> None:
    pull = _pull("first\n\nCSF-Session: 3e7b1f5d", f"second\n\nbody\n\n{footer}\n")
    lines = self_merge_lines(pull, IDENTITY)
    assert len(lines) == 1 and lines[0].startswith("NO-SELF-MERGE: commit 222222222222 ")


@pytest.mark.parametrize(
    "message",
    [
        "subject\n\nCSF-Session: 3e7b1f5d-9c2a-4d84",
        "subject\n\nCSF-Session: ouroboros-merger/31337 was mentioned in prose, not a "
        "trailer\n\nSigned-off-by: x",
        "CSF-Session: ouroboros-merger/31337",  # a subject line is never a trailer
        "subject\n\nX-CSF-Session: ouroboros-merger/31337",
    ],
)
def test_other_sessions_and_prose_are_not_self_merge(message: str) -> None:
    assert self_merge_lines(_pull(message), IDENTITY) == ()


def test_the_train_takes_ready_non_lang_pulls_oldest_first(forge: LocalForge) -> None:
    assert [p.number for p in ready_pulls(forge)] == [56, 60, 58]  # 55 is a draft, 59 is LANG, 52 merged


def test_one_pass_merges_refuses_and_never_runs_the_gate_on_a_self_merge(forge: LocalForge) -> None:
    gated: list[int] = []

    def gate(pull: PullRequest) -> GateResult:
        gated.append(pull.number)
        return checks_gate(pull)

    steps = run_train(forge, set(), gate, IDENTITY, lambda: T0)
    outcomes = {s.result.pull_request: s.result.outcome for s in steps}
    assert outcomes == {56: MergeOutcome.REFUSED, 60: MergeOutcome.MERGED, 58: MergeOutcome.REFUSED}
    assert gated == [56, 60]  # 58 carries CSF-Session: ouroboros-merger/4242: refused before the gate
    refused = {s.result.pull_request: s.result.refusal for s in steps}
    assert refused[56] == ("check miner_test (`python -m pytest miners/sleep_poll -q`) exited 1",)
    assert "NO-SELF-MERGE" in refused[58][0]
    assert forge.pull_request(60).state == "merged"
    assert [p.number for p in ready_pulls(forge)] == [56, 58]


def test_a_refused_head_gets_one_comment_and_is_retried_only_after_a_new_head(
    forge: LocalForge, tmp_path: Path
) -> None:
    refuse = lambda pull: GateResult(False, ("ruff: 3 errors",))  # noqa: E731
    first = run_train(forge, set(), refuse, IDENTITY, lambda: T0)
    tried = {(s.result.pull_request, s.result.head_sha) for s in first}
    assert all(s.commented for s in first)
    # A retried pass after a crash (the ledger did not record the heads) comments nothing new.
    again = run_train(forge, set(), refuse, IDENTITY, lambda: T0)
    assert not any(s.commented for s in again)
    assert [c.body.count("ruff: 3 errors") for c in forge.comments(56)] == [1]
    # With the heads recorded, nothing is tried again.
    assert run_train(forge, tried, refuse, IDENTITY, lambda: T0) == []
    # A new head on 56 is tried once more and commented once more.
    document = json.loads((tmp_path / "forge" / "pulls" / "56.json").read_text())
    document["head_sha"] = "ab" * 20
    (tmp_path / "writes" / "pulls").mkdir(parents=True, exist_ok=True)
    (tmp_path / "writes" / "pulls" / "56.json").write_text(json.dumps(document))
    steps = run_train(forge, tried, refuse, IDENTITY, lambda: T0)
    assert [(s.result.pull_request, s.result.head_sha) for s in steps] == [(56, "ab" * 20)]
    assert len(forge.comments(56)) == 2
    assert forge.comments(56)[-1].body.startswith(f"The merge train refused head {'ab' * 20}:")

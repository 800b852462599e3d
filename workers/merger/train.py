"""The merge train: every ready, non-LANG pull request, oldest first, each head tried once.

NO-SELF-MERGE: the merger's identity is ``ouroboros-merger/<pid>``, never a session's. A pull request one
of whose commits carries that identity (any process's) in a ``CSF-Session:`` trailer is refused without
running the gate: the key is read case-insensitively with any spacing before its colon, every value of a
repeated trailer counts, and the value is compared case-insensitively.

A refused head gets one comment carrying its refusal lines and the head it is about; the train tries that
pull request again only after a new head. Pure logic over a ``WritableForge`` and a gate callable.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime

from ouroboros_gates.forge import ForgeError, PullRequest, WritableForge
from ouroboros_gates.schemas import MergeOutcome, MergeResult

__all__ = [
    "MERGER",
    "GateResult",
    "TrainStep",
    "merger_identity",
    "ready_pulls",
    "refusal_comment",
    "run_train",
    "self_merge_lines",
]

MERGER = "ouroboros-merger"
_MERGER_VALUE = re.compile(rf"^{MERGER}/\S+$", re.IGNORECASE)
LANG = "LANG"


def merger_identity(pid: int | None = None) -> str:
    """The merger's identity: ``ouroboros-merger/<pid>`` (this process's pid by default)."""
    return f"{MERGER}/{os.getpid() if pid is None else pid}"


@dataclass(frozen=True)
class GateResult:
    """What the gate said about one head: passed, or the lines that refused it."""

    passed: bool
    lines: tuple[str, ...] = ()


Gate = Callable[[PullRequest], GateResult]


@dataclass(frozen=True)
class TrainStep:
    """One head the train took, and what it did with it."""

    result: MergeResult
    merge_commit: str = ""
    commented: bool = False


def ready_pulls(forge: WritableForge) -> list[PullRequest]:
    """Open, ready (not draft) pull requests without the LANG label, oldest first."""
    pulls = [p for p in forge.pull_requests("open") if not p.draft and LANG not in p.labels]
    return sorted(pulls, key=lambda p: (p.created_at, p.number))


def self_merge_lines(pull: PullRequest, identity: str) -> tuple[str, ...]:
    """The refusal lines when a commit of ``pull`` names the merger in a ``CSF-Session:`` trailer."""
    mine = identity.strip().lower()
    lines = []
    for commit in pull.commits:
        for value in commit.trailer("CSF-Session"):
            if value.strip().lower() == mine or _MERGER_VALUE.match(value.strip()):
                lines.append(
                    f"NO-SELF-MERGE: commit {commit.sha[:12]} carries the merger's identity in"
                    f" 'CSF-Session: {value.strip()}'; the merger never merges its own work"
                )
    return tuple(lines)


def refusal_comment(head_sha: str, lines: Collection[str]) -> str:
    """The one comment a refused head gets: the head, then each refusal line."""
    body = "\n".join(f"- {line}" for line in lines)
    return f"The merge train refused head {head_sha}:\n\n{body}\n\nIt tries again after a new head is pushed."


def run_train(
    forge: WritableForge,
    tried: Collection[tuple[int, str]],
    gate: Gate,
    identity: str,
    now: Callable[[], datetime],
) -> list[TrainStep]:
    """Take every ready head not tried yet, oldest first: refuse a self-merge, else run the gate."""
    return [
        _take(forge, pull, gate, identity, now)
        for pull in ready_pulls(forge)
        if (pull.number, pull.head_sha) not in tried
    ]


def _take(
    forge: WritableForge, pull: PullRequest, gate: Gate, identity: str, now: Callable[[], datetime]
) -> TrainStep:
    """One head: merged when nothing refuses it, else refused with its lines."""
    refusal = _refusal(pull, gate, identity)
    if not refusal:
        merged = _merge(forge, pull, identity, now)
        if isinstance(merged, TrainStep):
            return merged
        refusal = merged
    return _refused(forge, pull, refusal, now())


def _refusal(pull: PullRequest, gate: Gate, identity: str) -> tuple[str, ...]:
    """Why the head may not be merged: a self-merge (the gate is not run), else the gate's lines; none
    when it passes."""
    refusal = self_merge_lines(pull, identity)
    if refusal:
        return refusal
    verdict = gate(pull)
    return () if verdict.passed else (verdict.lines or ("the gate refused this head",))


def _merge(
    forge: WritableForge, pull: PullRequest, identity: str, now: Callable[[], datetime]
) -> TrainStep | tuple[str, ...]:
    """Merge the head: its step, or the forge's refusal (a conflict, a moved head, a protected branch)."""
    message = f"Merge pull request #{pull.number}: {pull.title}\n\nMerged-By: {identity}\n"
    try:
        merged = forge.merge(pull.number, pull.head_sha, message)
    except ForgeError as exc:
        return (f"the forge refused the merge: {exc}",)
    result = MergeResult(
        pull_request=pull.number, head_sha=pull.head_sha, outcome=MergeOutcome.MERGED, at=now()
    )
    return TrainStep(result, merge_commit=merged)


def _refused(forge: WritableForge, pull: PullRequest, refusal: tuple[str, ...], at: datetime) -> TrainStep:
    result = MergeResult(
        pull_request=pull.number, head_sha=pull.head_sha, outcome=MergeOutcome.REFUSED, refusal=refusal, at=at
    )
    return TrainStep(result, commented=_comment_once(forge, pull, refusal))


def _comment_once(forge: WritableForge, pull: PullRequest, lines: Collection[str]) -> bool:
    """Comment the refusal unless this head already has it (a retried train never comments twice)."""
    marker = f"refused head {pull.head_sha}:"
    if any(marker in comment.body for comment in forge.comments(pull.number)):
        return False
    forge.comment(pull.number, refusal_comment(pull.head_sha, lines))
    return True

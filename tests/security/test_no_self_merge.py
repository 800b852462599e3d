"""NO-SELF-MERGE under trailer variants: the merger refuses a pull request any commit of which names the
merger in a ``CSF-Session:`` trailer, whatever the key's case and spacing, among several trailers, in any
repeat of the key, and whatever the merger's process; a session's own trailer, or the identity outside the
trailer block, is not a self-merge."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ouroboros_gates.forge import Commit, PullRequest
from ouroboros_gates.workers.merger import merger_identity, self_merge_lines

ME = merger_identity(4242)
SUBJECT = "miner: flag late draft pull requests\n\nBody of the change.\n\n"


def _pull(*messages: str) -> PullRequest:
    commits = tuple(Commit.parse(f"{i + 1:040x}", message) for i, message in enumerate(messages))
    return PullRequest(
        number=7,
        title="t",
        body="",
        state="open",
        draft=False,
        labels=(),
        created_at=datetime(2026, 10, 2, tzinfo=UTC),
        base="main",
        head_sha=commits[-1].sha,
        author="csf-fixer",
        commits=commits,
        checks=(),
    )


@pytest.mark.parametrize(
    "trailers",
    [
        f"CSF-Session: {ME}",
        f"csf-session: {ME}",
        f"CSF-SESSION: {ME}",
        f"Csf-Session:{ME}",
        f"CSF-Session :   {ME}   ",
        f"CSF-Session\t:\t{ME}",
        f"CSF-Session: {ME.upper()}",
        "CSF-Session: ouroboros-merger/1",  # another process of the merger is still the merger
        f"CSF-Model: claude-opus-4-5\nCSF-Session: {ME}\nSigned-off-by: A Person <a@example.com>",
        f"CSF-Session: 2f8c4d1e-6a3b-4c7d-9e21-5b0a7f3c8d14\ncsf-session: {ME}",  # every repeat counts
        f"Co-authored-by: x <x@example.com>\nCSF-Session: {ME}",
    ],
    ids=[
        "exact",
        "lower",
        "upper",
        "no-space",
        "spaces",
        "tabs",
        "value-case",
        "other-pid",
        "among-several",
        "repeated",
        "with-co-author",
    ],
)
def test_the_merger_refuses_its_own_identity_in_any_trailer_variant(trailers: str) -> None:
    refused = self_merge_lines(_pull(SUBJECT + trailers), ME)
    assert refused and all(line.startswith("NO-SELF-MERGE") for line in refused)


def test_one_self_commit_among_many_is_enough() -> None:
    clean = SUBJECT + "CSF-Session: 2f8c4d1e-6a3b-4c7d-9e21-5b0a7f3c8d14"
    pull = _pull(clean, clean, SUBJECT + f"CSF-SESSION : {ME}", clean)
    refused = self_merge_lines(pull, ME)
    assert len(refused) == 1 and f"{3:040x}"[:12] in refused[0]


@pytest.mark.parametrize(
    "message",
    [
        SUBJECT + "CSF-Session: 2f8c4d1e-6a3b-4c7d-9e21-5b0a7f3c8d14",  # a session's own work
        SUBJECT + f"Reviewed-by: {ME}",  # the identity, but not in a CSF-Session trailer
        f"mention {ME} in the subject only",
        SUBJECT + f"CSF-Session: {ME}\nnot a trailer line",  # not a trailer block, as git reads it
        SUBJECT + "CSF-Session: ouroboros-merger",  # no process part: not the merger's identity
    ],
    ids=["session", "other-key", "subject", "not-a-block", "bare-name"],
)
def test_a_session_commit_is_not_refused_as_a_self_merge(message: str) -> None:
    assert self_merge_lines(_pull(message), ME) == ()

"""The GitHub forge against recorded GitHub API answers (served by an httpx transport; no network)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from ouroboros_gates.forge import ForgeError, NotFoundError, WritableForge
from ouroboros_gates.forge.github import GitHubForge, RateLimitedError
from ouroboros_gates.schemas.errors import ConfigurationError

RECORDED = json.loads((Path(__file__).parent / "recorded" / "github_api.json").read_text())


class Recorded:
    """Serves the recorded answers by method and path?query; remembers what was asked."""

    def __init__(self, extra: dict[str, list[dict[str, Any]]] | None = None) -> None:
        self.asked: list[tuple[str, str, Any]] = []
        self.queued = extra or {}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        key = f"{request.method} {request.url.raw_path.decode()}"
        body = json.loads(request.content) if request.content else None
        self.asked.append((request.method, request.url.raw_path.decode(), body))
        assert request.headers["authorization"] == "token t0ken"
        answer = self.queued[key].pop(0) if self.queued.get(key) else RECORDED.get(key)
        if answer is None:
            raise AssertionError(f"no recorded answer for {key}")
        return httpx.Response(answer["status"], headers=answer["headers"], json=answer["body"])


def _forge(served: Recorded, **kwargs: Any) -> GitHubForge:
    return GitHubForge("example", "shop", "t0ken", transport=httpx.MockTransport(served), **kwargs)


def test_the_token_comes_from_the_environment() -> None:
    with pytest.raises(ConfigurationError, match="GH_TOKEN or GITHUB_TOKEN"):
        GitHubForge.from_environment("example", "shop", {})
    forge = GitHubForge.from_environment(
        "example", "shop", {"GITHUB_TOKEN": "t0ken"}, transport=httpx.MockTransport(Recorded())
    )
    assert isinstance(forge, WritableForge)


def test_a_ticket_with_comments_over_two_pages() -> None:
    ticket = _forge(Recorded()).ticket(41)
    assert (ticket.number, ticket.state, ticket.labels) == (41, "open", ("mining",))
    assert ticket.created_at == datetime(2026, 9, 25, 21, 2, 19, tzinfo=UTC)
    assert [c.id for c in ticket.comments] == [3368102477, 3389917035]
    assert ticket.comments[-1].author == "ouroboros-loop"


def test_a_pull_request_is_not_a_ticket_and_a_missing_one_is_not_found() -> None:
    forge = _forge(Recorded())
    with pytest.raises(NotFoundError, match="is a pull request"):
        forge.ticket(60)
    with pytest.raises(NotFoundError, match="404: Not Found"):
        forge.ticket(999)
    assert forge.exists("#60") and not forge.exists("#999")


def test_a_pull_request_with_head_ref_commits_trailers_and_checks() -> None:
    pull = _forge(Recorded()).pull_request(60)
    assert (pull.state, pull.draft, pull.base, pull.author) == ("open", False, "main", "csf-fixer")
    assert pull.head_sha.startswith("be3f057d") and pull.head_ref == "miner/repeated-failure-4b9f0e6c"
    assert pull.commits[-1].trailer("csf-session") == ("4b9f0e6c-8d27-4a13-b5e1-7c3f2a9d6b58",)
    assert [(c.name, c.exit_code) for c in pull.checks] == [("ruff", 0), ("miner_test", 0)]


def test_open_pull_requests_and_a_failing_check() -> None:
    pulls = _forge(Recorded()).pull_requests("open")
    assert [p.number for p in pulls] == [58, 60]
    assert pulls[0].commits[0].trailer("CSF-Session") == ("ouroboros-merger/4242",)
    assert [(c.name, c.exit_code) for c in pulls[0].checks] == [("ruff", 1)]


def test_commits_and_files_at_a_revision() -> None:
    forge = _forge(Recorded())
    assert forge.has_commit("bd0245e") and not forge.has_commit("deadbeef")
    assert forge.file_at("374fdc4", "shop/reports.py") == b"import gzip\n"
    commit = forge.commit("bd0245e")
    assert commit.sha == "bd0245e589eae64527bf26804f0d2094844147fe"
    assert commit.message == "Bind the search term as a query parameter"
    assert commit.files == ("shop/db.py", "tests/test_db.py")
    with pytest.raises(NotFoundError):
        forge.commit("deadbeef")


def test_writes_comment_merge_and_close() -> None:
    served = Recorded()
    forge = _forge(served)
    comment = forge.comment(58, "The merge train refused head 134789bb")
    assert (comment.id, comment.author) == (3400000001, "ouroboros-bot")
    assert forge.merge(60, "be3f057d" + "0" * 32, "Merge #60\n\nMerged-By: ouroboros-merger/1") == (
        "6dcb09b5b57875f334f61aebed695e2e4193db5e"
    )
    forge.close_ticket(41)
    writes = [(m, p, b) for m, p, b in served.asked if m != "GET"]
    merge = {
        "sha": "be3f057d" + "0" * 32,
        "merge_method": "merge",
        "commit_title": "Merge #60",
        "commit_message": "Merged-By: ouroboros-merger/1",
    }
    assert writes == [
        ("POST", "/repos/example/shop/issues/58/comments", {"body": "The merge train refused head 134789bb"}),
        ("PUT", "/repos/example/shop/pulls/60/merge", merge),
        ("PATCH", "/repos/example/shop/issues/41", {"state": "closed", "state_reason": "completed"}),
    ]


def test_a_refused_merge_is_a_forge_error_naming_githubs_reason() -> None:
    with pytest.raises(ForgeError, match="409: Head branch was modified"):
        _forge(Recorded()).merge(58, "134789bb" + "1" * 32, "Merge #58")


def _limited(status: int, headers: dict[str, str], message: str) -> dict[str, Any]:
    return {
        "status": status,
        "headers": {"content-type": "application/json", **headers},
        "body": {"message": message},
    }


def _sleeper() -> tuple[list[float], Callable[[float], None]]:
    slept: list[float] = []
    return slept, slept.append


def test_a_secondary_limit_is_waited_out_with_retry_after() -> None:
    served = Recorded(
        {
            "GET /repos/example/shop/issues/41": [
                _limited(403, {"retry-after": "7"}, "You have exceeded a secondary rate limit."),
                _limited(429, {"retry-after": "3"}, "You have exceeded a secondary rate limit."),
            ]
        }
    )
    slept, sleep = _sleeper()
    assert _forge(served, sleep=sleep).ticket(41).number == 41
    assert slept == [7.0, 3.0]


def test_an_exhausted_window_waits_for_its_reset_before_the_next_request() -> None:
    now = 1_764_500_000.0
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(now) + 12)}
    answer = {**RECORDED["GET /repos/example/shop/issues/41"], "headers": headers}
    served = Recorded({"GET /repos/example/shop/issues/41": [answer]})
    slept, sleep = _sleeper()
    forge = _forge(served, sleep=sleep, clock=lambda: now)
    forge.ticket(41)  # this answer used the window's last request: the comments wait for its reset
    assert slept == [12.0]
    assert len(forge.comments(41)) == 2 and slept == [12.0]


def test_a_primary_limit_longer_than_the_wait_ceiling_is_transient() -> None:
    far = str(int(datetime.now(UTC).timestamp()) + 3600)
    limit = _limited(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": far}, "API rate limit exceeded")
    served = Recorded({"GET /repos/example/shop/issues/41": [limit]})
    slept, sleep = _sleeper()
    with pytest.raises(RateLimitedError, match="rate limit") as caught:
        _forge(served, sleep=sleep).ticket(41)
    assert slept == [] and caught.value.retry_after_s > 3000


def test_without_the_github_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from ouroboros_gates.forge.factory import open_forge
    from ouroboros_gates.schemas.settings import Settings

    monkeypatch.delitem(sys.modules, "ouroboros_gates.forge.github", raising=False)
    monkeypatch.setitem(sys.modules, "githubkit", None)  # as if the extra were not installed
    with pytest.raises(ConfigurationError, match=r"pip install 'ouroboros-gates\[github\]'"):
        open_forge(Settings(forge="github:octo/repo"))

"""The GitHub forge, through githubkit: tickets, comments, pull requests, commits, checks, merge.

The token comes from the environment (``GH_TOKEN``, else ``GITHUB_TOKEN``). Rate limits are honoured:
after a response whose ``x-ratelimit-remaining`` is 0 the next request waits for ``x-ratelimit-reset``;
a primary or secondary limit (403/429, ``retry-after``) is waited out and the request tried again. A wait
longer than ``max_wait_s`` is not slept through: it raises ``RateLimitedError`` (transient), so a worker
retries later instead of holding its slot. Lists follow the ``Link: rel="next"`` pages.

This module is the one boundary where githubkit's and httpx's errors are translated:

    TransientError
    └── RateLimitedError     a rate limit longer than the adapter will wait (retry after ``retry_after_s``)
    ForgeError               any other refusal (4xx), or a malformed answer; 404 is NotFoundError
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

import httpx
from githubkit import GitHub
from githubkit.exception import GitHubException, RateLimitExceeded, RequestError, RequestFailed

from ouroboros_gates.forge.base import HEX_REF as _SHA
from ouroboros_gates.forge.base import ISSUE_REF as _ISSUE_REF
from ouroboros_gates.forge.base import Check, Comment, Commit, ForgeError, NotFoundError, PullRequest, Ticket
from ouroboros_gates.schemas.errors import ConfigurationError, TransientError

__all__ = ["GitHubForge", "RateLimitedError"]

_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')
_PASSING = {"success", "neutral", "skipped"}
_TRIES = 3


class RateLimitedError(TransientError):
    """GitHub's rate limit asks for a longer wait than the adapter will sleep."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class GitHubForge:
    """One repository on GitHub (or GitHub Enterprise at ``base_url``)."""

    def __init__(
        self,
        owner: str,
        name: str,
        token: str,
        *,
        base_url: str | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        max_wait_s: float = 60.0,
    ) -> None:
        self.owner, self.name = owner, name
        self._gh: GitHub[Any] = GitHub(
            token, base_url=base_url, transport=transport, auto_retry=False, http_cache=False
        )
        self._sleep, self._clock, self.max_wait_s = sleep, clock, max_wait_s
        self._reset_at: float | None = None  # set when the last response left no requests in the window

    @classmethod
    def from_environment(
        cls, owner: str, name: str, environ: Mapping[str, str], **kwargs: Any
    ) -> GitHubForge:
        """The forge with the token from ``GH_TOKEN`` or ``GITHUB_TOKEN``."""
        token = environ.get("GH_TOKEN") or environ.get("GITHUB_TOKEN")
        if not token:
            raise ConfigurationError("OURO_FORGE is a GitHub repository: set GH_TOKEN or GITHUB_TOKEN")
        return cls(owner, name, token, **kwargs)

    # -- reads -------------------------------------------------------------------------------------

    def ticket(self, number: int) -> Ticket:
        """Issue ``number`` with its comments (a pull request is not a ticket)."""
        data = self._get(f"issues/{int(number)}")
        if "pull_request" in data:
            raise NotFoundError(f"#{number} is a pull request, not a ticket")
        return self._ticket(data)

    def tickets(self) -> list[Ticket]:
        """Every issue (open and closed), by number."""
        items = [i for i in self._pages("issues", {"state": "all"}) if "pull_request" not in i]
        return sorted((self._ticket(item) for item in items), key=lambda t: t.number)

    def pull_request(self, number: int) -> PullRequest:
        """Pull request ``number`` with its commits and the checks on its head."""
        return self._pull(self._get(f"pulls/{int(number)}"))

    def pull_requests(self, state: str | None = None) -> list[PullRequest]:
        """Pull requests in ``state`` (open, closed, merged; all when None), by number."""
        wanted = {"open": "open", None: "all"}.get(state, "closed")
        pulls = [self._pull(item) for item in self._pages("pulls", {"state": wanted})]
        return sorted((p for p in pulls if state is None or p.state == state), key=lambda p: p.number)

    def exists(self, ref: str) -> bool:
        """Whether ``#N`` is an issue or pull request, or a hex string a commit of the repository."""
        issue = _ISSUE_REF.fullmatch(ref)
        if issue is not None:
            return self._found(f"issues/{int(issue.group(1))}")
        return _SHA.fullmatch(ref) is not None and self.has_commit(ref)

    def has_commit(self, sha: str) -> bool:
        """Whether the repository has the commit ``sha``."""
        return _SHA.fullmatch(sha) is not None and self._found(f"commits/{sha}")

    def commit(self, sha: str) -> Commit:
        """The commit ``sha`` with its message and the paths it changed (GitHub lists up to 3,000)."""
        if _SHA.fullmatch(sha) is None:
            raise NotFoundError(f"{sha!r} is not a commit sha")
        data = self._get(f"commits/{sha}")
        files = tuple(
            str(f["filename"]) for f in data.get("files") or () if isinstance(f, dict) and "filename" in f
        )
        return Commit.parse(str(data["sha"]), str(data["commit"]["message"]), files)

    def file_at(self, revision: str, path: str) -> bytes:
        """The bytes of ``path`` at ``revision``."""
        data = self._get(f"contents/{path.lstrip('/')}", {"ref": revision})
        if not isinstance(data, dict) or data.get("type") != "file":
            raise NotFoundError(f"{path!r} at {revision!r} is not a file")
        try:
            return base64.b64decode(data.get("content") or "")
        except ValueError as exc:
            raise ForgeError(f"{path!r} at {revision!r}: content is not base64: {exc}") from exc

    def comments(self, number: int) -> tuple[Comment, ...]:
        """Every comment on issue or pull request ``number``, oldest first."""
        return tuple(_comment(c) for c in self._pages(f"issues/{int(number)}/comments", {}))

    # -- writes ------------------------------------------------------------------------------------

    def comment(self, number: int, body: str) -> Comment:
        """Post ``body`` on issue or pull request ``number``."""
        return _comment(self._call("POST", f"issues/{int(number)}/comments", json={"body": body}).json())

    def merge(self, number: int, head_sha: str, message: str) -> str:
        """Merge at ``head_sha`` (GitHub refuses when the head moved); the merge commit's sha."""
        title, _, body = message.partition("\n")
        payload = {
            "sha": head_sha,
            "merge_method": "merge",
            "commit_title": title,
            "commit_message": body.strip(),
        }
        answer = self._call("PUT", f"pulls/{int(number)}/merge", json=payload).json()
        return str(answer.get("sha") or "")

    def close_ticket(self, number: int) -> None:
        """Close issue ``number``."""
        self._call("PATCH", f"issues/{int(number)}", json={"state": "closed", "state_reason": "completed"})

    # -- the boundary ------------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return f"/repos/{self.owner}/{self.name}/{path}"

    def _get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return self._call("GET", path, params=dict(params or {})).json()

    def _found(self, path: str) -> bool:
        try:
            self._call("GET", path)
        except NotFoundError:
            return False
        return True

    def _pages(self, path: str, params: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        url: str | None = self._url(path)
        query: dict[str, Any] | None = {**params, "per_page": 100}
        while url is not None:
            response = self._call("GET", url, params=query, absolute=True)
            items = response.json()
            if not isinstance(items, list):
                raise ForgeError(f"GET {path}: expected a list, got {type(items).__name__}")
            yield from items
            match = _NEXT.search(response.headers.get("link", ""))
            url, query = (match.group(1), None) if match else (None, None)

    def _call(self, method: str, path: str, *, absolute: bool = False, **kwargs: Any) -> Any:
        """One request, waiting out rate limits; every foreign error becomes ours here."""
        url = path if absolute else self._url(path)
        for attempt in range(1, _TRIES + 1):
            self._wait_for_window(method, url)
            try:
                response = self._gh.request(method, url, **kwargs)
            except RateLimitExceeded as exc:
                self._note(exc.response.raw_response)
                wait = max(exc.retry_after.total_seconds(), 0.0)
                if attempt == _TRIES or wait > self.max_wait_s:
                    raise RateLimitedError(
                        f"{method} {url}: GitHub rate limit, retry in {wait:.0f} s", wait
                    ) from exc
                self._sleep(wait)
                continue
            except RequestFailed as exc:
                raise _translated(method, url, exc) from exc
            except (RequestError, GitHubException) as exc:
                raise TransientError(f"{method} {url}: {type(exc).__name__}: {exc}") from exc
            self._note(response.raw_response)
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    def _note(self, response: httpx.Response) -> None:
        remaining, reset = (
            response.headers.get("x-ratelimit-remaining"),
            response.headers.get("x-ratelimit-reset"),
        )
        self._reset_at = float(reset) if remaining == "0" and reset and reset.isdigit() else None

    def _wait_for_window(self, method: str, url: str) -> None:
        if self._reset_at is None:
            return
        wait = self._reset_at - self._clock()
        if wait > self.max_wait_s:
            raise RateLimitedError(
                f"{method} {url}: no requests left until the window resets in {wait:.0f} s", wait
            )
        if wait > 0:
            self._sleep(wait)
        self._reset_at = None

    # -- shapes ------------------------------------------------------------------------------------

    def _ticket(self, data: Mapping[str, Any]) -> Ticket:
        try:
            return Ticket(
                number=int(data["number"]),
                title=str(data["title"]),
                body=str(data.get("body") or ""),
                state=str(data["state"]),
                labels=_labels(data),
                created_at=_time(data["created_at"]),
                comments=self.comments(int(data["number"])) if data.get("comments") else (),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ForgeError(f"issue: malformed answer: {exc!r}") from exc

    def _pull(self, data: Mapping[str, Any]) -> PullRequest:
        try:
            number, head = int(data["number"]), data["head"]
            state = "merged" if data.get("merged_at") else str(data["state"])
            commits = tuple(
                Commit.parse(str(c["sha"]), str(c["commit"]["message"]))
                for c in self._pages(f"pulls/{number}/commits", {})
            )
            return PullRequest(
                number=number,
                title=str(data["title"]),
                body=str(data.get("body") or ""),
                state=state,
                draft=bool(data.get("draft")),
                labels=_labels(data),
                created_at=_time(data["created_at"]),
                base=str(data["base"]["ref"]),
                head_sha=str(head["sha"]),
                author=str(data["user"]["login"]),
                commits=commits,
                checks=self._checks(str(head["sha"])),
                head_ref=str(head.get("ref") or ""),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ForgeError(f"pull request: malformed answer: {exc!r}") from exc

    def _checks(self, sha: str) -> tuple[Check, ...]:
        runs = self._get(f"commits/{sha}/check-runs", {"per_page": 100}).get("check_runs", [])
        return tuple(
            Check(
                name=str(run["name"]),
                command=str((run.get("output") or {}).get("title") or run.get("details_url") or ""),
                exit_code=0 if run.get("conclusion") in _PASSING else 1,
            )
            for run in runs
        )


def _translated(method: str, url: str, exc: RequestFailed) -> Exception:
    status = exc.response.status_code
    try:
        detail = exc.response.raw_response.json().get("message", "")
    except ValueError:
        detail = exc.response.raw_response.text[:200]
    message = f"{method} {url}: GitHub answered {status}: {detail}"
    if status == 404 or (status == 422 and method == "GET"):  # 422 on a GET: the ref names no object
        return NotFoundError(message)
    if status >= 500:
        return TransientError(message)
    return ForgeError(message)


def _labels(data: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(label["name"]) for label in data.get("labels") or [])


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _comment(data: Mapping[str, Any]) -> Comment:
    try:
        return Comment(
            id=int(data["id"]),
            author=str(data["user"]["login"]),
            created_at=_time(data["created_at"]),
            body=str(data.get("body") or ""),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ForgeError(f"comment: malformed answer: {exc!r}") from exc

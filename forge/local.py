"""A forge on disk: ``tickets/<n>.json`` and ``pulls/<n>.json`` beside a git repository or bundle.

The embedded default and the tests use it (``examples/forge`` and ``examples/repo.bundle``). git runs
with argument lists only, never a shell, and a revision or path starting with ``-`` is refused so git
cannot read it as an option. Every foreign error (JSON, OS, git) becomes a ``ForgeError`` here.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from ouroboros_gates.forge.base import HEX_REF as _SHA
from ouroboros_gates.forge.base import ISSUE_REF as _ISSUE_REF
from ouroboros_gates.forge.base import Check, Comment, Commit, ForgeError, NotFoundError, PullRequest, Ticket
from ouroboros_gates.forge.git import git
from ouroboros_gates.forge.overlay import append_comment, claim_number, read_comments, write_document
from ouroboros_gates.schemas.errors import GitError, TransientError

__all__ = ["LocalForge"]

_T = TypeVar("_T")
_GIT_TIMEOUT_S = 60.0


class LocalForge:
    """Tickets and pull requests from JSON files, commits and files from a local git repository."""

    def __init__(
        self,
        forge_dir: Path,
        repository: Path,
        *,
        cache_dir: Path | None = None,
        writes_dir: Path | None = None,
    ) -> None:
        self.forge_dir = Path(forge_dir)
        self.repository = Path(repository)
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        self.writes_dir = None if writes_dir is None else Path(writes_dir)  # see forge.overlay
        self._repo: Path | None = None

    @classmethod
    def from_examples(cls, examples: Path, cache_dir: Path, writes_dir: Path | None = None) -> LocalForge:
        """The forge of the shipped sample corpus: ``examples/forge`` and ``examples/repo.bundle``."""
        return cls(
            Path(examples) / "forge",
            Path(examples) / "repo.bundle",
            cache_dir=cache_dir,
            writes_dir=writes_dir,
        )

    # -- tickets and pull requests ---------------------------------------------------------------

    def ticket(self, number: int) -> Ticket:
        """The ticket ``number``."""
        return self._with_comments(self._read_one("tickets", number, _ticket))

    def tickets(self) -> list[Ticket]:
        """Every ticket, by number."""
        return [self._with_comments(self._read(path, _ticket)) for path in self._files("tickets")]

    def pull_request(self, number: int) -> PullRequest:
        """The pull request ``number``."""
        return self._read_one("pulls", number, _pull_request)

    def pull_requests(self, state: str | None = None) -> list[PullRequest]:
        """Every pull request in ``state`` (all when None), by number."""
        pulls = [self._read(path, _pull_request) for path in self._files("pulls")]
        return [pull for pull in pulls if state is None or pull.state == state]

    def exists(self, ref: str) -> bool:
        """Whether ``#N`` is an issue or pull request, or a hex string a commit of the repository."""
        issue = _ISSUE_REF.fullmatch(ref)
        if issue is not None:
            name = f"{int(issue.group(1))}.json"
            return any(
                (root / kind / name).is_file() for root in self._roots() for kind in ("tickets", "pulls")
            )
        return _SHA.fullmatch(ref) is not None and self.has_commit(ref)

    # -- writes (into the writes directory; the shipped forge is never modified) ----------------

    def comments(self, number: int) -> tuple[Comment, ...]:
        """Every comment on issue or pull request ``number``: the shipped ones, then those written here."""
        shipped: tuple[Comment, ...] = ()
        if any((root / "tickets" / f"{int(number)}.json").is_file() for root in self._roots()):
            shipped = self._read_one("tickets", number, _ticket).comments
        return shipped + self._written_comments(number)

    def comment(self, number: int, body: str, author: str = "ouroboros") -> Comment:
        """Post ``body`` on issue or pull request ``number``."""
        if not self.exists(f"#{int(number)}"):
            raise NotFoundError(f"no issue or pull request #{number} to comment on")
        return append_comment(self._writes("comments"), number, author, body, datetime.now(UTC))

    def close_ticket(self, number: int) -> None:
        """Close issue ``number`` (its document is copied into the writes directory, state ``closed``)."""
        path = self._read_path("tickets", number)
        write_document(self._writes("tickets") / f"{int(number)}.json", {**_load(path), "state": "closed"})

    def merge(self, number: int, head_sha: str, message: str) -> str:
        """Merge pull request ``number`` at ``head_sha`` into its base in the repository (a merge commit
        made with ``git merge-tree``/``commit-tree``/``update-ref``); returns the merge commit. A head whose
        commits the repository does not hold (a pull request known only by its metadata) is marked merged
        and ``""`` is returned."""
        pull = self.pull_request(number)
        if pull.state != "open":
            raise ForgeError(f"pull request #{number} is {pull.state}, not open")
        if pull.head_sha != head_sha:
            raise ForgeError(
                f"pull request #{number}'s head moved: {pull.head_sha[:12]}, not {head_sha[:12]}"
            )
        merged = self._git_merge(pull, message) if self.has_commit(head_sha) else ""
        document = {**_load(self._read_path("pulls", number)), "state": "merged", "merge_commit": merged}
        write_document(self._writes("pulls") / f"{int(number)}.json", document)
        return merged

    def open_pull_request(self, document: Mapping[str, Any]) -> PullRequest:
        """Open a pull request from ``document`` (the fields of ``pulls/<n>.json`` less ``number``)."""
        try:
            _pull_request({**document, "number": 1})
        except _FieldError as exc:
            raise ForgeError(f"cannot open a pull request: {exc}") from exc
        taken = [int(p.stem) for kind in ("pulls", "tickets") for p in self._files(kind)]
        number = claim_number(self._writes("claims"), taken)
        write_document(self._writes("pulls") / f"{number}.json", {**document, "number": number})
        return self.pull_request(number)

    def git_dir(self) -> Path:
        """The git directory the forge reads (the bundle's clone in the cache directory)."""
        return self._repository()

    def _git_merge(self, pull: PullRequest, message: str) -> str:
        _refuse_option(pull.base, "base")
        base = (
            self._git("rev-parse", "--verify", "--end-of-options", f"refs/heads/{pull.base}")
            .stdout.decode()
            .strip()
        )
        tree = self._git("merge-tree", "--write-tree", "--no-messages", base, pull.head_sha, check=False)
        if tree.returncode != 0:
            raise ForgeError(f"pull request #{pull.number} does not merge cleanly into {pull.base}")
        oid = tree.stdout.decode().split()[0]
        who = ["-c", "user.name=ouroboros-merger", "-c", "user.email=merger@ouroboros.invalid"]
        commit = self._git(
            *who, "commit-tree", oid, "-p", base, "-p", pull.head_sha, "-m", message
        ).stdout.decode()
        commit = commit.strip()
        self._git("update-ref", f"refs/heads/{pull.base}", commit, base)
        return commit

    def _writes(self, kind: str) -> Path:
        if self.writes_dir is None:
            raise ForgeError(f"{self.forge_dir}: this local forge is read-only (no writes directory)")
        return self.writes_dir / kind

    def _written_comments(self, number: int) -> tuple[Comment, ...]:
        return () if self.writes_dir is None else read_comments(self.writes_dir / "comments", number)

    def _with_comments(self, ticket: Ticket) -> Ticket:
        written = self._written_comments(ticket.number)
        return replace(ticket, comments=ticket.comments + written) if written else ticket

    def _read_path(self, kind: str, number: int) -> Path:
        for root in self._roots():
            if (path := root / kind / f"{int(number)}.json").is_file():
                return path
        raise NotFoundError(f"no {kind[:-1] if kind == 'tickets' else 'pull request'} #{number}")

    # -- the repository --------------------------------------------------------------------------

    def has_commit(self, sha: str) -> bool:
        """Whether the repository has the commit ``sha`` (full or an unambiguous prefix)."""
        _refuse_option(sha, "revision")
        if _SHA.fullmatch(sha) is None:
            return False
        return (
            self._git("cat-file", "-e", "--end-of-options", f"{sha}^{{commit}}", check=False).returncode == 0
        )

    def commit(self, sha: str) -> Commit:
        """The commit ``sha`` with its message and the paths it changed against its first parent."""
        if not self.has_commit(sha):
            raise NotFoundError(f"no commit {sha!r} in the repository")
        full = (
            self._git("rev-parse", "--verify", "--end-of-options", f"{sha}^{{commit}}")
            .stdout.decode()
            .strip()
        )
        raw = self._git("cat-file", "commit", full).stdout.decode("utf-8", "replace")
        message = raw.split("\n\n", 1)[1] if "\n\n" in raw else ""
        listed = self._git(
            "diff-tree", "--no-commit-id", "--name-only", "-r", "-z", "--root", "-m", "--first-parent", full
        ).stdout
        files = tuple(dict.fromkeys(p.decode("utf-8", "surrogateescape") for p in listed.split(b"\0") if p))
        return Commit.parse(full, message.rstrip("\n"), files)

    def file_at(self, revision: str, path: str) -> bytes:
        """The bytes of ``path`` at ``revision``."""
        _refuse_option(revision, "revision")
        _refuse_option(path, "path")
        if ":" in revision:
            raise ForgeError(f"refused revision {revision!r}: it must not contain ':'")
        result = self._git("cat-file", "blob", "--end-of-options", f"{revision}:{path}", check=False)
        if result.returncode != 0:
            raise NotFoundError(f"{path!r} at {revision!r}: {_stderr(result)}")
        return result.stdout

    def _repository(self) -> Path:
        """The git directory to read, cloning a bundle into the cache directory the first time."""
        if self._repo is None:
            if self.repository.is_dir():
                self._repo = self.repository.resolve()
            elif self.repository.is_file() and self.repository.suffix == ".bundle":
                self._repo = self._clone_bundle(self.repository.resolve())
            else:
                raise ForgeError(f"{self.repository}: not a git repository directory or a .bundle file")
        return self._repo

    def _clone_bundle(self, bundle: Path) -> Path:
        if self.cache_dir is None:
            raise ForgeError(f"{bundle}: a bundle needs a cache directory to be cloned into")
        try:
            digest = hashlib.sha256(bundle.read_bytes()).hexdigest()[:16]
            self.cache_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ForgeError(f"{bundle}: {exc}") from exc
        target = (self.cache_dir / f"{bundle.stem}-{digest}.git").resolve()
        if target.is_dir():
            return target
        # Clone beside the target, then rename: a concurrent or interrupted clone never leaves half a repo.
        scratch = Path(tempfile.mkdtemp(prefix=".clone-", dir=self.cache_dir)) / "repo.git"
        try:
            _run_git(["clone", "--quiet", "--bare", "--", str(bundle), str(scratch)], cwd=None)
            try:
                scratch.rename(target)
            except OSError:
                if not target.is_dir():
                    raise
        except OSError as exc:
            raise ForgeError(f"{bundle}: cannot clone into {self.cache_dir}: {exc}") from exc
        finally:
            shutil.rmtree(scratch.parent, ignore_errors=True)
        return target

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        return _run_git(list(args), cwd=self._repository(), check=check)

    # -- JSON files ------------------------------------------------------------------------------

    def _roots(self) -> list[Path]:
        """Where documents are read from, the writes directory first (it wins over the shipped forge)."""
        return [self.writes_dir, self.forge_dir] if self.writes_dir is not None else [self.forge_dir]

    def _files(self, kind: str) -> list[Path]:
        found: dict[int, Path] = {}
        for root in reversed(self._roots()):
            folder = root / kind
            if folder.is_dir():
                found.update({int(path.stem): path for path in folder.glob("*.json") if path.stem.isdigit()})
        return [found[number] for number in sorted(found)]

    def _read_one(self, kind: str, number: int, build: Callable[[Mapping[str, Any]], _T]) -> _T:
        path = next(
            (p for root in self._roots() if (p := root / kind / f"{int(number)}.json").is_file()),
            self.forge_dir / kind / f"{int(number)}.json",
        )
        if not path.is_file():
            raise NotFoundError(f"no {kind[:-1] if kind == 'tickets' else 'pull request'} #{number} ({path})")
        return self._read(path, build)

    @staticmethod
    def _read(path: Path, build: Callable[[Mapping[str, Any]], _T]) -> _T:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ForgeError(f"{path}:{exc.lineno}:{exc.colno}: malformed JSON: {exc.msg}") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise ForgeError(f"{path}: cannot read: {exc}") from exc
        if not isinstance(data, dict):
            raise ForgeError(f"{path}: expected a JSON object, got {type(data).__name__}")
        try:
            value = build(data)
        except _FieldError as exc:
            raise ForgeError(f"{path}: {exc}") from exc
        if getattr(value, "number", None) != int(path.stem):
            raise ForgeError(f"{path}: number {data.get('number')!r} does not match the file name")
        return value


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ForgeError(f"{path}: cannot read: {exc}") from exc
    if not isinstance(data, dict):
        raise ForgeError(f"{path}: expected a JSON object")
    return data


class _FieldError(Exception):
    """A field of a forge file is missing or of the wrong type (turned into ForgeError with the path)."""


def _get(data: Mapping[str, Any], key: str, kind: type[_T]) -> _T:
    if key not in data:
        raise _FieldError(f"missing field {key!r}")
    value = data[key]
    # bool is an int in Python; a count or id must not be true/false.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _FieldError(f"field {key!r}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _strings(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    items = _get(data, key, list)
    if not all(isinstance(item, str) for item in items):
        raise _FieldError(f"field {key!r}: expected a list of strings")
    return tuple(items)


def _objects(data: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    items = _get(data, key, list)
    if not all(isinstance(item, dict) for item in items):
        raise _FieldError(f"field {key!r}: expected a list of objects")
    return items


def _time(data: Mapping[str, Any], key: str) -> datetime:
    text = _get(data, key, str)
    try:
        return datetime.fromisoformat(text)
    except ValueError as exc:
        raise _FieldError(f"field {key!r}: not an ISO 8601 time: {text!r}") from exc


def _ticket(data: Mapping[str, Any]) -> Ticket:
    comments = tuple(
        Comment(
            id=_get(item, "id", int),
            author=_get(item, "author", str),
            created_at=_time(item, "created_at"),
            body=_get(item, "body", str),
        )
        for item in _objects(data, "comments")
    )
    return Ticket(
        number=_get(data, "number", int),
        title=_get(data, "title", str),
        body=_get(data, "body", str),
        state=_get(data, "state", str),
        labels=_strings(data, "labels"),
        created_at=_time(data, "created_at"),
        comments=comments,
    )


def _pull_request(data: Mapping[str, Any]) -> PullRequest:
    commits = tuple(
        Commit.parse(_get(c, "sha", str), _get(c, "message", str)) for c in _objects(data, "commits")
    )
    checks = tuple(
        Check(name=_get(c, "name", str), command=_get(c, "command", str), exit_code=_get(c, "exit_code", int))
        for c in _objects(data, "checks")
    )
    return PullRequest(
        number=_get(data, "number", int),
        title=_get(data, "title", str),
        body=_get(data, "body", str),
        state=_get(data, "state", str),
        draft=_get(data, "draft", bool),
        labels=_strings(data, "labels"),
        created_at=_time(data, "created_at"),
        base=_get(data, "base", str),
        head_sha=_get(data, "head_sha", str),
        author=_get(data, "author", str),
        commits=commits,
        checks=checks,
        head_ref=str(data.get("head_ref") or ""),
    )


def _refuse_option(value: str, what: str) -> None:
    """Refuse what git could read as an option (or that could not be an argument at all)."""
    if not value or value.startswith("-") or "\0" in value:
        raise ForgeError(f"refused {what} {value!r}: empty, starting with '-', or containing NUL")


def _run_git(args: list[str], cwd: Path | None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run git for the forge; its errors become the forge's (a timeout is worth retrying)."""
    try:
        return git(*args, cwd=cwd, check=check, timeout=_GIT_TIMEOUT_S)
    except GitError as exc:
        if exc.timed_out:
            raise TransientError(f"git {args[0]} timed out after {_GIT_TIMEOUT_S:.0f} s") from exc
        if exc.returncode is None:
            raise ForgeError(f"cannot run git: {exc.message}") from exc
        raise ForgeError(f"git {args[0]} failed ({exc.returncode}): {exc.message}") from exc


def _stderr(result: subprocess.CompletedProcess[bytes]) -> str:
    return result.stderr.decode("utf-8", "replace").strip() or f"exit {result.returncode}"

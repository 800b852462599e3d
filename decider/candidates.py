"""Candidates from git: a push ``base..head`` maps changed hunks to the head's enclosing functions.

Everything is read from commits (``git ls-tree``, ``git cat-file``, ``git diff -U0``), so a bare
repository works and nothing is checked out. git runs with argument lists, revisions are resolved to
object names with ``--end-of-options`` first, and paths follow ``--``: a branch or path made of shell
metacharacters is only ever a name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ouroboros_gates.decider.folder import MAX_BYTES
from ouroboros_gates.decider.languages import ParsedFile, language_of, parse_source
from ouroboros_gates.forge.git import git
from ouroboros_gates.schemas import Candidate
from ouroboros_gates.schemas.errors import GitError

__all__ = [
    "ChangedFile",
    "GitError",
    "GitRepo",
    "changed_lines",
    "parse_commit",
    "select",
]

_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class ChangedFile:
    """A file of the head that a push changed, with the head lines it added or modified."""

    path: str
    lines: frozenset[int]


class GitRepo:
    """Read-only access to one repository (bare or not) by commit."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _git(self, *args: str, stdin: bytes | None = None, what: str) -> bytes:
        try:
            return git(*args, cwd=self.root, input=stdin, user_config=True).stdout
        except GitError as exc:
            raise GitError(list(args), f"{what}: {exc.message}", exc.returncode, exc.timed_out) from exc

    def resolve(self, revision: str) -> str:
        """The full object name of a commit; an option-looking or odd revision is only a name."""
        out = self._git(
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            f"{revision}^{{commit}}",
            what=f"resolve revision {revision!r}",
        )
        return out.decode().strip()

    def files(self, commit: str) -> list[str]:
        """Every blob path at a commit (symlinks and submodules left out)."""
        out = self._git("ls-tree", "-r", "-z", "--full-tree", commit, what=f"list files of {commit}")
        paths = []
        for entry in out.split(b"\0"):
            if not entry:
                continue
            meta, _, path = entry.partition(b"\t")
            mode, kind, _ = meta.split(b" ", 2)
            if kind == b"blob" and mode in {b"100644", b"100755"}:
                paths.append(path.decode("utf-8", "surrogateescape"))
        return paths

    def read(self, commit: str, paths: Iterable[str]) -> dict[str, bytes]:
        """File contents at a commit, in one ``cat-file --batch`` (missing paths are left out)."""
        wanted = [p for p in paths if "\n" not in p]
        if not wanted:
            return {}
        query = b"".join(f"{commit}:{p}\n".encode("utf-8", "surrogateescape") for p in wanted)
        out = self._git("cat-file", "--batch", stdin=query, what=f"read files at {commit}")
        return _batch_contents(out, wanted)

    def diff_paths(self, base: str, head: str) -> list[str]:
        """Paths added, copied or modified from ``base`` to ``head`` (deletions have no head function)."""
        out = self._git(
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--diff-filter=ACMT",
            base,
            head,
            "--",
            what=f"diff {base}..{head}",
        )
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def hunks(self, base: str, head: str, path: str) -> frozenset[int]:
        """Head lines added or modified in ``path`` (``git diff -U0``); a pure deletion marks the line
        after."""
        out = self._git(
            "diff",
            "-U0",
            "--no-color",
            "--no-ext-diff",
            "--no-renames",
            base,
            head,
            "--",
            path,
            what=f"diff {base}..{head} of {path!r}",
        )
        lines: set[int] = set()
        for raw in out.splitlines():
            match = _HUNK.match(raw)
            if match is None:
                continue
            start, count = int(match.group(1)), int(match.group(2) or b"1")
            lines.update(range(start, start + count) if count else (max(start, 1),))
        return frozenset(lines)


def _batch_contents(out: bytes, wanted: Sequence[str]) -> dict[str, bytes]:
    """The contents ``cat-file --batch`` printed, by the path asked for (missing ones left out)."""
    found: dict[str, bytes] = {}
    offset = 0
    for path in wanted:
        end = out.index(b"\n", offset)
        header = out[offset:end].split(b" ")
        offset = end + 1
        if header[-1] == b"missing" or len(header) < 3:
            continue
        size = int(header[2])
        found[path] = out[offset : offset + size]
        offset += size + 1
    return found


def changed_lines(repo: GitRepo, base: str, head: str) -> list[ChangedFile]:
    """Changed head lines per file of a language with a grammar."""
    return [
        ChangedFile(path=path, lines=repo.hunks(base, head, path))
        for path in repo.diff_paths(base, head)
        if language_of(path) is not None
    ]


def parse_commit(repo: GitRepo, commit: str, paths: Iterable[str] | None = None) -> dict[str, ParsedFile]:
    """Parse every source file (or the given ones) of a commit; binary and oversized files are skipped."""
    chosen = _source_paths(repo, commit, paths)
    parsed: dict[str, ParsedFile] = {}
    for path, data in repo.read(commit, chosen).items():
        language = language_of(path)
        if language is None or not _is_text_within_bounds(data):
            continue
        parsed[path] = parse_source(path, language, data)
    return parsed


def _source_paths(repo: GitRepo, commit: str, paths: Iterable[str] | None) -> list[str]:
    """The paths (every file of the commit without ``paths``) of a language with a grammar."""
    return [p for p in (repo.files(commit) if paths is None else paths) if language_of(p) is not None]


def _is_text_within_bounds(data: bytes) -> bool:
    """Whether a file is small enough to parse and not binary (no NUL byte in its first 8 KiB)."""
    return not (len(data) > MAX_BYTES or b"\0" in data[:8192])


def select(
    repo_key: str,
    head: str,
    parsed: Mapping[str, ParsedFile],
    families_by_function: Mapping[tuple[str, str], Iterable[str]],
    changed: Mapping[str, frozenset[int]] | None,
) -> list[Candidate]:
    """One candidate per (function, family) with a signal; in a push, only functions holding a change."""
    found: list[Candidate] = []
    for (path, function), fams in sorted(families_by_function.items()):
        if changed is not None and not _holds_change(parsed.get(path), changed.get(path), function):
            continue
        found.extend(
            Candidate(repo=repo_key, pin=head, path=path, function=function, family=family)
            for family in sorted(set(fams))
        )
    return found


def _holds_change(item: ParsedFile | None, lines: frozenset[int] | None, function: str) -> bool:
    """Whether the function holds one of the lines a push changed in its file."""
    if item is None or not lines:
        return False
    return any(item.enclosing(n).name == function for n in lines)

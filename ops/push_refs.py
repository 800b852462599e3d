"""The refs of a push, as the decider takes them: git's pre-push lines on stdin, or the variables pre-commit
sets when it runs the hook; a new ref decided from the parent of its first commit no remote has."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from ouroboros_gates.forge.git import git
from ouroboros_gates.schemas import NULL_COMMIT
from ouroboros_gates.schemas.errors import OuroError

__all__ = ["Push", "new_ref_base", "parse_pre_push", "pre_commit_pushes", "read_pushes"]


@dataclass(frozen=True)
class Push:
    """One ref of a push: what the remote has (``base``, zeros for a new ref) and what is pushed."""

    repo: str
    ref: str
    base: str
    head: str
    path: str | None = None


def parse_pre_push(lines: Iterable[str], repo: str, path: str | None) -> list[Push]:
    """git's pre-push stdin: ``<local ref> <local sha> <remote ref> <remote sha>`` per line; deletions
    (a local sha of zeros) are skipped. A malformed line is an error naming its line number."""
    pushes = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split()
        if not _is_pre_push_line(parts):
            raise OuroError(f"stdin:{number}: expected '<local ref> <local sha> <remote ref> <remote sha>'")
        _local_ref, local_sha, remote_ref, remote_sha = parts
        if local_sha != NULL_COMMIT:
            pushes.append(Push(repo, remote_ref, remote_sha, local_sha, path))
    return pushes


def _is_pre_push_line(parts: list[str]) -> bool:
    """Whether a line's fields are git's four: two refs, each followed by its full sha."""
    return len(parts) == 4 and all(_is_sha(part) for part in parts[1::2])


def _is_sha(text: str) -> bool:
    """Whether ``text`` is a full commit sha (40 lowercase hex digits)."""
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)


def pre_commit_pushes(env: Mapping[str, str], top: Path, repo: str) -> list[Push] | None:
    """The push pre-commit describes in its variables, or None when pre-commit did not run this command.

    pre-commit reads git's stdin itself and passes on the first ref that pushes commits: the commits as
    ``PRE_COMMIT_FROM_REF``/``PRE_COMMIT_TO_REF`` (before 2.2, ``PRE_COMMIT_ORIGIN``/``PRE_COMMIT_SOURCE``),
    and only ``PRE_COMMIT_LOCAL_BRANCH`` when every commit of the branch is new to the remote (its root
    included). Names of refs are accepted as well as commits (``pre-commit run --from-ref origin/main
    --to-ref HEAD``). Nothing named (a run with no refs) is an empty list."""
    head_given = env.get("PRE_COMMIT_TO_REF") or env.get("PRE_COMMIT_SOURCE")
    local = env.get("PRE_COMMIT_LOCAL_BRANCH")
    if env.get("PRE_COMMIT") != "1" and not head_given and not local:
        return None
    return _pre_commit_named(env, top, repo, head_given, local)


def _pre_commit_named(
    env: Mapping[str, str], top: Path, repo: str, head_given: str | None, local: str | None
) -> list[Push]:
    """The ref pre-commit names: its commits, or a branch new to the remote, or none (an empty list)."""
    ref = env.get("PRE_COMMIT_REMOTE_BRANCH") or local or "HEAD"
    if head_given:
        return [
            Push(
                repo, ref, _pre_commit_base(env, top), _commit(top, head_given, "PRE_COMMIT_TO_REF"), str(top)
            )
        ]
    if local:
        return [Push(repo, ref, NULL_COMMIT, _commit(top, local, "PRE_COMMIT_LOCAL_BRANCH"), str(top))]
    return []


def _pre_commit_base(env: Mapping[str, str], top: Path) -> str:
    """The remote's commit pre-commit names (the null commit when it names none)."""
    base_given = env.get("PRE_COMMIT_FROM_REF") or env.get("PRE_COMMIT_ORIGIN")
    return _commit(top, base_given, "PRE_COMMIT_FROM_REF") if base_given else NULL_COMMIT


def _commit(top: Path, name: str, variable: str) -> str:
    """The commit ``name`` (a sha or a ref) names in the checkout; an error naming the variable otherwise."""
    found = git(
        "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", cwd=top, check=False, user_config=True
    )
    sha = found.stdout.decode("utf-8", "replace").strip()
    if found.returncode != 0 or len(sha) != 40:
        raise OuroError(f"{variable}={name!r}: not a commit of {top}")
    return sha


def read_pushes(top: Path, repo: str, env: Mapping[str, str], stdin: TextIO) -> list[Push]:
    """The refs being pushed from the checkout ``top``: pre-commit's variables when pre-commit runs this, else
    git's stdin lines. A new ref is decided from the parent of its first commit no remote has; a ref that
    pushes nothing new is left out."""
    given = pre_commit_pushes(env, top, repo)
    if given is None:
        given = _git_pushes(stdin, top, repo)
    pushes = [_with_base(top, push) for push in given]
    return [push for push in pushes if push.base != push.head]


def _git_pushes(stdin: TextIO, top: Path, repo: str) -> list[Push]:
    """The refs git gives a pre-push hook on stdin; an error when stdin is a terminal (no hook ran this)."""
    if stdin.isatty():
        raise OuroError(
            "stdin: no refs; git gives a pre-push hook '<local ref> <local sha> <remote ref> "
            "<remote sha>' lines there (install the hook with `ouro hooks install`)"
        )
    return parse_pre_push(stdin.read().splitlines(), repo, str(top))


def _with_base(top: Path, push: Push) -> Push:
    """The push, decided from the parent of its first unpushed commit when it is a new ref."""
    return push if push.base != NULL_COMMIT else replace(push, base=new_ref_base(top, push.head))


def new_ref_base(repo: Path, head: str) -> str:
    """For a new ref, the parent of the oldest commit no remote has (zeros when every commit is new)."""
    unpushed = git(
        "rev-list", "--reverse", head, "--not", "--remotes", cwd=repo, check=False, user_config=True
    )
    listed = unpushed.stdout.decode("utf-8", "replace").split()
    if not listed:
        return head
    found = git("rev-parse", "--verify", "--quiet", f"{listed[0]}^", cwd=repo, check=False, user_config=True)
    return found.stdout.decode("utf-8", "replace").strip() or NULL_COMMIT

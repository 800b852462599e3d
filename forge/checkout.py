"""A local checkout as the commands that read one see it: the checkout holding a path, its repository key,
what git ignores in it, and what a git query says of it. git is used when present, never required to read a
plain folder."""

from __future__ import annotations

from pathlib import Path

from ouroboros_gates.forge.git import git
from ouroboros_gates.schemas.errors import GitError, OuroError

__all__ = ["ignored", "query", "repo_key", "toplevel"]


def query(repo: Path, *args: str) -> str:
    """What ``git args…`` prints in ``repo`` (the user's config applies), stripped; an error naming the
    checkout and git's own complaint when it fails."""
    done = git(*args, cwd=repo, check=False, user_config=True)
    if done.returncode != 0:
        raise OuroError(
            f"{repo}: git {args[0]}: {done.stderr.decode('utf-8', 'replace').strip() or 'failed'}"
        )
    return done.stdout.decode("utf-8", "replace").strip()


def repo_key(repo: Path) -> str:
    """``owner/name`` from the origin remote, else the directory's name."""
    found = git("config", "--get", "remote.origin.url", cwd=repo, check=False, user_config=True)
    url = found.stdout.decode().strip()
    tail = url.removesuffix(".git").replace(":", "/").split("/")[-2:] if url else []
    return "/".join(tail) if len(tail) == 2 and all(tail) else repo.resolve().name


def toplevel(path: Path) -> Path | None:
    """The git checkout holding ``path``, or None (a plain folder, or git is not installed)."""
    folder = path if path.is_dir() else path.parent
    try:
        done = git("rev-parse", "--show-toplevel", cwd=folder, check=False, user_config=True)
    except GitError:  # git is not installed: a plain folder
        return None
    top = done.stdout.decode("utf-8", "replace").strip()
    return Path(top).resolve() if done.returncode == 0 and top else None


def ignored(top: Path) -> frozenset[str]:
    """What git ignores in the checkout, relative to it (untracked only; a wholly ignored folder once, ending
    in ``/``); nothing when git cannot say."""
    try:
        listed = ("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
        done = git(*listed, cwd=top, check=False, user_config=True)
    except GitError:
        return frozenset()
    if done.returncode != 0:
        return frozenset()
    return frozenset(p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p)

"""A fixer session's repository: a clone of its own, never a worktree of the repository it branches from.

A ``git worktree`` shares its repository's git directory (config, hooks, every ref), so an agent that can
commit in one can plant a hook or a config key that the worker's next git command runs. Here the session
gets a clone (``--no-local``: objects copied, never hard-linked) whose git directory is entirely its own;
the repository it came from is not even visible in the sandbox. After the session the worker fetches the
session's branch back, the one operation git makes safe against a repository someone else wrote
(``upload-pack`` runs no hook and honours no command from that repository's config). Every git command
here is ``sealed`` (``forge.git.seal``): hooks off, no fsmonitor, only local transport, objects checked.
"""

from __future__ import annotations

from pathlib import Path

from ouroboros_gates.forge.git import git, seal
from ouroboros_gates.schemas.errors import PermanentError

__all__ = ["bring_back", "check_out", "sealed_config"]


def sealed_config(git_dir: Path, worktree: Path) -> Path:
    """The session's sealed git config (beside its worktree, outside the sandbox's view)."""
    return seal(worktree.parent / "git.config", git_dir, worktree)


def check_out(git_dir: Path, worktree: Path, branch: str, base: str = "main") -> None:
    """Clone ``git_dir``'s ``base`` into ``worktree`` and start ``branch`` there; the clone pushes where
    the repository's ``origin`` does."""
    if worktree.exists():
        raise PermanentError(f"{worktree} already exists: a session's checkout is made once")
    worktree.parent.mkdir(parents=True, exist_ok=True)
    config = sealed_config(git_dir, worktree)
    git(
        "clone",
        "--quiet",
        "--no-local",
        "--no-checkout",
        "--single-branch",
        "--no-tags",
        "--branch",
        base,
        "--",
        str(git_dir),
        str(worktree),
        sealed=config,
    )
    git("checkout", "--quiet", "-b", branch, cwd=worktree, sealed=config)
    origin = git("config", "--get", "remote.origin.url", cwd=git_dir, check=False, sealed=config)
    if origin.returncode == 0 and (url := origin.stdout.decode("utf-8", "replace").strip()):
        git("remote", "set-url", "origin", url, cwd=worktree, sealed=config)


def bring_back(git_dir: Path, worktree: Path, branch: str) -> str:
    """Fetch ``branch`` from the session's clone into ``git_dir`` (objects checked); what happened."""
    if (outside := _points_outside(worktree / ".git")) is not None:
        return f"branch {branch} not brought back: the clone's {outside} points outside it"
    config = sealed_config(git_dir, worktree)
    refspec = f"+refs/heads/{branch}:refs/heads/{branch}"
    done = git(
        "fetch", "--quiet", "--no-tags", str(worktree), refspec, cwd=git_dir, check=False, sealed=config
    )
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"branch {branch} not brought back: {said[-1] if said else f'exit {done.returncode}'}"
    return f"branch {branch} brought back"


def _points_outside(git_dir: Path) -> str | None:
    """What of a clone's git directory would make ``upload-pack`` read objects elsewhere (a link in place of
    the directory, its object store or its folders, or an alternates file), or None. Checked once the
    sandbox is gone, so nothing can change it after."""
    replaced = _replaced_folder(git_dir)
    if replaced is not None:
        return replaced
    return _alternates(git_dir)


def _replaced_folder(git_dir: Path) -> str | None:
    """The first of the git directory and its object folders that is a link or not a folder, or None."""
    for path in (git_dir, git_dir / "objects", git_dir / "objects" / "info", git_dir / "objects" / "pack"):
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            return path.name
    return None


def _alternates(git_dir: Path) -> str | None:
    """The alternates file the object store has (objects read from elsewhere), or None."""
    for name in ("alternates", "http-alternates"):
        if (git_dir / "objects" / "info" / name).exists():
            return f"objects/info/{name}"
    return None

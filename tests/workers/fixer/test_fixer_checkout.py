"""The session's clone: its own git directory, its branch brought back, and a clone whose object store points
elsewhere (alternates, links) never fetched from."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ouroboros_gates.forge import LocalForge
from ouroboros_gates.schemas.errors import PermanentError
from ouroboros_gates.workers.fixer.checkout import bring_back, check_out

ROOT = Path(__file__).resolve().parents[3]
IDENTITY = ["-c", "user.name=a", "-c", "user.email=a@example.invalid"]


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    forge = LocalForge.from_examples(ROOT / "examples", tmp_path / "cache")
    return forge.git_dir()


def _commit(worktree: Path) -> str:
    (worktree / "new.txt").write_text("new\n")
    subprocess.run(["git", *IDENTITY, "-C", str(worktree), "add", "new.txt"], check=True)
    subprocess.run(["git", *IDENTITY, "-C", str(worktree), "commit", "-q", "-m", "new"], check=True)
    done = subprocess.run(
        ["git", "-C", str(worktree), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _tip(origin: Path, branch: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(origin), "rev-parse", "--verify", "-q", f"refs/heads/{branch}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip()


def test_a_clone_of_its_own_and_its_branch_brought_back(origin: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "session" / "worktree"
    check_out(origin, worktree, "miner/x-1")
    assert (worktree / ".git").is_dir() and not (
        worktree / ".git" / "objects" / "info" / "alternates"
    ).exists()
    head = _commit(worktree)
    assert _tip(origin, "miner/x-1") == ""  # nothing lands in the origin while the session runs
    assert bring_back(origin, worktree, "miner/x-1") == "branch miner/x-1 brought back"
    assert _tip(origin, "miner/x-1") == head
    with pytest.raises(PermanentError, match="already exists"):
        check_out(origin, worktree, "miner/x-1")


@pytest.mark.parametrize("trap", ["alternates", "objects link", "git dir link"])
def test_a_clone_whose_object_store_points_elsewhere_is_not_fetched_from(
    origin: Path, tmp_path: Path, trap: str
) -> None:
    worktree = tmp_path / "session" / "worktree"
    check_out(origin, worktree, "miner/x-2")
    _commit(worktree)
    git_dir = worktree / ".git"
    if trap == "alternates":
        (git_dir / "objects" / "info" / "alternates").write_text(f"{origin / 'objects'}\n")
    elif trap == "objects link":
        shutil.move(git_dir / "objects", tmp_path / "objects")
        os.symlink(tmp_path / "objects", git_dir / "objects")
    else:
        shutil.move(git_dir, tmp_path / "moved.git")
        os.symlink(tmp_path / "moved.git", git_dir)
    said = bring_back(origin, worktree, "miner/x-2")
    assert said.startswith("branch miner/x-2 not brought back: the clone's ") and "points outside it" in said
    assert _tip(origin, "miner/x-2") == ""

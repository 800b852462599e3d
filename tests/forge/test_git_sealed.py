"""forge.git: a repository's hooks and fsmonitor never run under git(); a sealed command honours no config the
other repository wrote, reaches it only over the file protocol, and fetches from it whoever owns it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ouroboros_gates.forge.git import git, seal
from ouroboros_gates.schemas.errors import GitError

IDENTITY = {
    "GIT_AUTHOR_NAME": "a",
    "GIT_AUTHOR_EMAIL": "a@example.invalid",
    "GIT_COMMITTER_NAME": "a",
    "GIT_COMMITTER_EMAIL": "a@example.invalid",
}


def _payload(markers: Path, name: str) -> str:
    return f"#!/bin/sh\ntouch '{markers}/{name}'\n"


def _booby_trapped(root: Path, markers: Path) -> Path:
    """A repository with one commit, hooks in both places git looks, and config naming programs."""
    repo = root / "trap"
    git("init", "-q", "-b", "main", str(repo))
    git("commit", "-q", "--allow-empty", "-m", "one", cwd=repo, env=IDENTITY)
    for folder in (repo / ".git" / "hooks", repo / "evil-hooks"):
        folder.mkdir(exist_ok=True)
        for name in ("post-checkout", "reference-transaction", "pre-commit", "post-commit"):
            (folder / name).write_text(_payload(markers, f"{folder.name}-{name}"))
            (folder / name).chmod(0o755)
    monitor = repo / "monitor"
    monitor.write_text(_payload(markers, "fsmonitor"))
    monitor.chmod(0o755)
    config = {
        "core.hooksPath": str(repo / "evil-hooks"),
        "core.fsmonitor": str(monitor),
        "uploadpack.packObjectsHook": f"touch {markers}/pack-objects",
    }
    for key, value in config.items():
        git("config", key, value, cwd=repo)
    return repo


def test_hooks_and_fsmonitor_never_run_under_git(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = _booby_trapped(tmp_path, markers)
    git("checkout", "-q", "-b", "other", cwd=repo)
    git("commit", "-q", "--allow-empty", "-m", "two", cwd=repo, env=IDENTITY)
    git("update-ref", "refs/heads/moved", "HEAD", cwd=repo)
    git("status", "--porcelain", cwd=repo)
    assert sorted(p.name for p in markers.iterdir()) == []
    # Control: plain git runs them (the trap is live).
    subprocess.run(
        ["git", "-C", str(repo), "checkout", "-q", "main"], check=True, env={**os.environ, **IDENTITY}
    )
    assert "evil-hooks-post-checkout" in {p.name for p in markers.iterdir()}


def test_a_sealed_fetch_takes_commits_from_a_foreign_repository_and_runs_nothing_of_it(
    tmp_path: Path,
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    foreign = _booby_trapped(tmp_path, markers)
    if os.getuid() == 0:  # owned by someone else, as a sandboxed agent's clone is
        for path in (foreign, *foreign.rglob("*")):
            os.chown(path, 65534, 65534, follow_symlinks=False)
    ours = tmp_path / "ours"
    git("init", "-q", "--bare", str(ours))
    config = seal(tmp_path / "sealed.config", ours, foreign)
    git("fetch", "-q", str(foreign), "+refs/heads/main:refs/heads/main", cwd=ours, sealed=config)
    tip = git("rev-parse", "HEAD", cwd=foreign, sealed=config).stdout
    assert git("rev-parse", "refs/heads/main", cwd=ours).stdout == tip
    assert sorted(p.name for p in markers.iterdir()) == []


def test_a_sealed_command_reaches_no_transport_but_files(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    ours = tmp_path / "ours"
    git("init", "-q", "--bare", str(ours))
    config = seal(tmp_path / "sealed.config", ours)
    for url in (f"ext::sh -c touch% {markers}/ext", "ssh://example.invalid/x", "https://example.invalid/x"):
        with pytest.raises(GitError):
            git("fetch", "-q", url, cwd=ours, sealed=config, timeout=30)
    assert sorted(p.name for p in markers.iterdir()) == []
    text = config.read_text()
    assert "hooksPath = /dev/null" in text and "fsmonitor = false" in text and "fsckObjects = true" in text

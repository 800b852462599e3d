"""The local forge's write side: comments, closing, opening and merging pull requests (a real git merge in
the bundle's clone), all in the writes directory; the shipped forge is never modified."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from ouroboros_gates.forge import ForgeError, LocalForge, NotFoundError, WritableForge

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _digest(folder: Path) -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(folder.rglob("*.json")))).hexdigest()


@pytest.fixture
def forge(tmp_path: Path) -> LocalForge:
    shutil.copytree(EXAMPLES / "forge", tmp_path / "shipped" / "forge")
    shutil.copy(EXAMPLES / "repo.bundle", tmp_path / "shipped" / "repo.bundle")
    return LocalForge.from_examples(tmp_path / "shipped", tmp_path / "cache", writes_dir=tmp_path / "writes")


def _branch_commit(forge: LocalForge, name: str) -> str:
    """A commit on a new branch made from main with git plumbing (a file of its own)."""
    git = ["git", "-C", str(forge.git_dir())]
    blob = subprocess.run(
        [*git, "hash-object", "-w", "--stdin"], input=b"x\n", capture_output=True, check=True
    )
    base_tree = subprocess.run(
        [*git, "rev-parse", "main^{tree}"], capture_output=True, check=True
    ).stdout.decode()
    index = {"GIT_INDEX_FILE": str(forge.git_dir() / "scratch-index")}
    env = {**index, "PATH": "/usr/bin:/bin"}
    subprocess.run([*git, "read-tree", base_tree.strip()], env=env, check=True)
    entry = f"100644,{blob.stdout.decode().strip()},{name}.txt"
    subprocess.run([*git, "update-index", "--add", "--cacheinfo", entry], env=env, check=True)
    tree = (
        subprocess.run([*git, "write-tree"], env=env, capture_output=True, check=True).stdout.decode().strip()
    )
    who = {
        **env,
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@x",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@x",
    }
    commit = (
        subprocess.run(
            [*git, "commit-tree", tree, "-p", "main", "-m", f"{name}\n\nCSF-Session: s\n"],
            env=who,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    subprocess.run([*git, "update-ref", f"refs/heads/{name}", commit], check=True)
    return commit


def _open(forge: LocalForge, head: str, ref: str) -> int:
    return forge.open_pull_request(
        {
            "title": ref,
            "body": "Closes #47.",
            "state": "open",
            "draft": False,
            "labels": [],
            "created_at": "2026-10-05T19:05:00+00:00",
            "base": "main",
            "head_sha": head,
            "author": "csf-fixer",
            "head_ref": ref,
            "commits": [{"sha": head, "message": f"{ref}\n\nCSF-Session: s\n"}],
            "checks": [],
        }
    ).number


def test_writes_go_to_the_writes_directory_only(forge: LocalForge) -> None:
    assert isinstance(forge, WritableForge)
    shipped = _digest(forge.forge_dir)
    forge.comment(41, "kept open")
    forge.comment(56, "refused head")
    forge.close_ticket(41)
    assert forge.ticket(41).state == "closed" and forge.ticket(41).comments[-1].body == "kept open"
    assert [c.body for c in forge.comments(56)] == ["refused head"]
    assert _digest(forge.forge_dir) == shipped


def test_opening_numbers_after_every_issue_and_pull_request(forge: LocalForge) -> None:
    head = _branch_commit(forge, "miner/a-1234abcd")
    assert _open(forge, head, "miner/a-1234abcd") == 61
    assert _open(forge, head, "miner/b-1234abcd") == 62
    pull = forge.pull_request(61)
    assert (pull.head_ref, pull.head_sha, pull.state) == ("miner/a-1234abcd", head, "open")
    with pytest.raises(ForgeError, match="cannot open a pull request: missing field"):
        forge.open_pull_request({"body": ""})


def test_merge_is_a_merge_commit_on_the_base(forge: LocalForge) -> None:
    first, second = _branch_commit(forge, "one"), _branch_commit(forge, "two")
    a, b = _open(forge, first, "one"), _open(forge, second, "two")
    merged = forge.merge(a, first, "Merge pull request #61")
    git = ["git", "-C", str(forge.git_dir())]
    parents = subprocess.run(
        [*git, "rev-list", "--parents", "-n", "1", "main"], capture_output=True, check=True
    )
    assert parents.stdout.decode().split()[0] == merged and parents.stdout.decode().split()[2] == first
    assert forge.pull_request(a).state == "merged"
    forge.merge(b, second, "Merge pull request #62")  # a second branch from the old main merges cleanly too
    files = subprocess.run(
        [*git, "ls-tree", "--name-only", "main"], capture_output=True, check=True
    ).stdout.decode()
    assert {"one.txt", "two.txt"} <= set(files.split())
    with pytest.raises(ForgeError, match="is merged, not open"):
        forge.merge(a, first, "again")


def test_a_moved_head_or_a_read_only_forge_is_refused(forge: LocalForge, tmp_path: Path) -> None:
    with pytest.raises(ForgeError, match="head moved"):
        forge.merge(60, "ab" * 20, "Merge")
    assert forge.merge(60, forge.pull_request(60).head_sha, "Merge") == ""  # known only by its metadata
    read_only = LocalForge.from_examples(tmp_path / "shipped", tmp_path / "cache")
    with pytest.raises(ForgeError, match="read-only"):
        read_only.comment(41, "x")
    with pytest.raises(NotFoundError):
        forge.comment(999, "x")


def test_concurrent_openings_get_distinct_numbers(forge: LocalForge) -> None:
    from concurrent.futures import ThreadPoolExecutor

    head = _branch_commit(forge, "many")
    with ThreadPoolExecutor(max_workers=8) as pool:
        numbers = list(pool.map(lambda i: _open(forge, head, f"many-{i}"), range(16)))
    assert sorted(numbers) == list(range(61, 77))
    opened = {p.number: p.head_ref for p in forge.pull_requests("open") if p.number > 60}
    assert opened == {number: f"many-{i}" for i, number in enumerate(numbers)}

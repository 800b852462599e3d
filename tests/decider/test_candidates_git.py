"""Candidates from git: changed hunks to enclosing head functions, scans, bare repositories, odd names."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from _decider_support import GIT_ENV

from ouroboros_gates.decider import analyse, candidates
from ouroboros_gates.decider.candidates import GitError, GitRepo

ENV = GIT_ENV


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, env=ENV, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str = "change") -> str:
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        git(repo, "init", "-q", "-b", "main")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


BEFORE = """import os


def greet(name):
    return "hello " + name


def run(cmd):
    return len(cmd)
"""

AFTER = """import os


def greet(name):
    return "hello " + name


def run(cmd):
    os.system("ls " + cmd)
    return len(cmd)

API_KEY = "sk-live-0123456789abcdef"
"""


def test_a_push_maps_changed_hunks_to_the_enclosing_head_functions(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    base = commit(repo, {"tool.py": BEFORE})
    head = commit(repo, {"tool.py": AFTER})
    found = candidates(repo, head, base, "owner/r")
    keys = {(c.path, c.function, c.family) for c in found}
    assert keys == {("tool.py", "run", "command_injection"), ("tool.py", "<global>", "hardcoded_secret")}
    assert {c.pin for c in found} == {head} and {c.repo for c in found} == {"owner/r"}
    (run,) = [a for a in analyse(repo, head, base, "owner/r") if a.candidate.function == "run"]
    assert run.changed_lines == (9,)
    assert (run.start_line, run.end_line) == (8, 10)
    assert run.code.splitlines()[0] == "def run(cmd):"
    assert run.record.base == base and run.record.unit == "delta"


def test_an_unchanged_function_with_a_signal_is_no_candidate_of_the_push(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    base = commit(repo, {"tool.py": AFTER})
    head = commit(repo, {"tool.py": AFTER.replace('"hello "', '"hi "')})
    assert candidates(repo, head, base, "owner/r") == []
    scanned = {(c.function, c.family) for c in candidates(repo, head, None, "owner/r")}
    assert scanned == {("run", "command_injection"), ("<global>", "hardcoded_secret")}


def test_a_bare_clone_is_read_without_a_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    base = commit(repo, {"tool.py": BEFORE})
    head = commit(repo, {"tool.py": AFTER})
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    assert candidates(bare, head, base, "owner/r") == candidates(repo, head, base, "owner/r")
    assert candidates(bare, "main", "main~1", "owner/r") == candidates(repo, head, base, "owner/r")


def test_branch_and_path_names_made_of_shell_metacharacters_are_only_names(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    odd_dir = "a;touch $(echo PWNED) `touch PWNED2` |x&"
    base = commit(repo, {"keep.py": "x = 1\n"})
    git(repo, "checkout", "-q", "-b", "evil;touch${IFS}PWNED3$(id)")
    head = commit(repo, {f"{odd_dir}/tool.py": AFTER})
    found = candidates(repo, "evil;touch${IFS}PWNED3$(id)", base, "owner/r")
    assert {c.path for c in found} == {f"{odd_dir}/tool.py"}
    assert {c.pin for c in found} == {head}
    assert not list(tmp_path.rglob("PWNED*")) and not list(Path.cwd().glob("PWNED*"))


def test_an_option_looking_or_unknown_revision_is_refused_by_name(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    commit(repo, {"tool.py": BEFORE})
    out = tmp_path / "written"
    with pytest.raises(GitError, match="resolve revision"):
        GitRepo(repo).resolve(f"--output={out}")
    with pytest.raises(GitError, match="no-such-branch"):
        candidates(repo, "no-such-branch", None, "owner/r")
    assert not out.exists()


def test_a_deleted_file_and_a_non_source_file_raise_no_candidate(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    base = commit(repo, {"tool.py": AFTER, "notes.txt": "os.system(x)\n"})
    (repo / "tool.py").unlink()
    head = commit(repo, {"notes.txt": "os.system(y)\n"})
    assert candidates(repo, head, base, "owner/r") == []

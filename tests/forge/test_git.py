"""forge.git, the one place git is started: its environment, its errors and its timeout."""

from __future__ import annotations

from pathlib import Path

import pytest

from ouroboros_gates.forge.git import git, git_text
from ouroboros_gates.schemas.errors import GitError, PermanentError


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git("init", "-q", str(tmp_path / "repo"))
    return tmp_path / "repo"


def test_a_hooks_repository_variables_never_reach_another_repository(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    git("init", "-q", str(other))
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))  # as git exports it to a pre-push hook
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'user.name'='injected'")
    assert Path(git_text("rev-parse", "--absolute-git-dir", cwd=repo)) == (repo / ".git").resolve()
    assert git("config", "user.name", cwd=repo, check=False).stdout == b""


def test_the_global_config_is_read_only_for_the_users_own_checkout(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = someone\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    assert git("config", "user.name", cwd=repo, check=False).stdout == b""
    assert git_text("config", "user.name", cwd=repo, user_config=True) == "someone"


def test_a_failure_is_one_git_error_naming_the_command_and_gits_words(repo: Path) -> None:
    with pytest.raises(GitError, match=r"git rev-parse --verify no-such-ref: .*") as raised:
        git("rev-parse", "--verify", "no-such-ref", cwd=repo)
    assert isinstance(raised.value, PermanentError)
    assert raised.value.returncode == 128 and not raised.value.timed_out
    assert git("rev-parse", "--verify", "no-such-ref", cwd=repo, check=False).returncode == 128


def test_a_command_past_its_timeout_is_a_git_error_that_says_so(repo: Path) -> None:
    with pytest.raises(GitError, match="timed out") as raised:
        git("hash-object", "--stdin", cwd=repo, input=b"x" * 10, timeout=0.000_001)
    assert raised.value.timed_out

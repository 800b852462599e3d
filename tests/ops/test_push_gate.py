"""The push gate wherever git runs hooks: ``ouro hooks install`` into ``.git/hooks`` or the ``core.hooksPath``
folder, and pre-commit's own pre-push hook (pre-commit run for real, on a local hook made from this
repository's
``.pre-commit-hooks.yaml``). Each way, a real ``git push`` to a local bare remote is refused in blocking mode
when it adds a Flask command injection and goes through when the code is clean; the push is decided in the
hook's own process (no worker started) and the log holds ``PushReceived`` and the decider's ``DecisionMade``.

The decisions come from the LM program over the scripted model server (``tests/fake_model_server.py``): it
answers "vulnerable" for the code that builds a shell command from the request, "not vulnerable" otherwise.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from ouroboros_gates.decider.program import OperatingPoint, Program
from ouroboros_gates.events import SqlEventStore
from ouroboros_gates.ops.hooks_install import PRE_PUSH_MARK, hooks_folder, install_pre_push
from ouroboros_gates.ops.pushes import pre_commit_pushes
from ouroboros_gates.schemas import NULL_COMMIT as NEW
from ouroboros_gates.schemas import DecidePush
from ouroboros_gates.schemas.errors import ConfigurationError, OuroError

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
OURO = str(BIN / "ouro")

BASE_CODE = """from flask import Flask

app = Flask(__name__)


@app.route("/")
def index():
    return "shop"
"""


def with_ping(call: str) -> str:
    """The app with a ``/ping`` route that returns ``call``."""
    head = BASE_CODE.replace(
        "from flask import Flask", "import subprocess\n\nfrom flask import Flask, request"
    )
    return (
        head + '\n\n@app.route("/ping")\ndef ping():\n    host = request.args.get("host", "")\n    return '
        f"{call}\n"
    )


FLAW = with_ping('subprocess.check_output("ping -c 1 " + host, shell=True)')
CLEAN = with_ping('subprocess.run(["ping", "-c", "1", "--", host], capture_output=True, check=False).stdout')


@dataclass(frozen=True)
class Project:
    """A checkout with a bare remote that already holds its first commit."""

    tmp: Path
    repo: Path
    remote: Path
    base: str


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def commit(repo: Path, code: str, message: str) -> str:
    (repo / "app.py").write_text(code)
    git(repo, "add", "app.py", "requirements.txt")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def push(repo: Path) -> subprocess.CompletedProcess[str]:
    """``git push``; what it and its hooks said in ``stdout`` (pre-commit writes its report there)."""
    return subprocess.run(
        ["git", "-C", str(repo), "push", "origin", "main"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=240,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model_server: Any) -> Project:
    """The checkout, its remote, the LM program over the scripted model, git and pre-commit kept to
    tmp_path."""
    program = Program(
        kind="llm-program",
        k=1,
        operating_points={"*": OperatingPoint(advisory=0.4, block=0.8, block_offered=True)},
    )
    (tmp_path / "program.json").write_text(program.to_json())
    yes = {
        "verdict": "vulnerable",
        "family": "command_injection",
        "confidence": 0.95,
        "rationale": "The host parameter reaches a shell.",
        "cited_lines": [14],
    }
    no = {
        "verdict": "not_vulnerable",
        "family": "x",
        "confidence": 0.9,
        "rationale": "An argument vector.",
        "cited_lines": [],
    }
    model_server.script([{"contains": '"ping -c 1 " + host', "content": yes}], default={"content": no})
    env = {
        "OURO_STATE": str(tmp_path / "state"),
        "OURO_ROOTS": str(tmp_path),
        "OURO_MODEL": "local",
        "OURO_MODEL_URL": model_server.url + "/v1",
        "OURO_DECIDER_PROGRAM": str(tmp_path / "program.json"),
        "GIT_CONFIG_GLOBAL": str(tmp_path / "gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "dev",
        "GIT_AUTHOR_EMAIL": "dev@example.invalid",
        "GIT_COMMITTER_NAME": "dev",
        "GIT_COMMITTER_EMAIL": "dev@example.invalid",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for name in (
        "OURO_EMBED_MODEL",
        "OURO_DATABASE_URL",
        "OURO_BROKER_URL",
        "PRE_COMMIT",
        "PRE_COMMIT_TO_REF",
    ):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "gitconfig").write_text("")
    repo, remote = tmp_path / "shop", tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    (repo / "requirements.txt").write_text("flask\n")
    base = commit(repo, BASE_CODE, "shop")
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    return Project(tmp_path, repo, remote, base)


def install(project: Project) -> subprocess.CompletedProcess[str]:
    """``ouro hooks install`` run in the checkout, as a user runs it."""
    argv = [OURO, "hooks", "install", "--settings", str(project.tmp / "claude.json"), "--no-refresh"]
    return subprocess.run(argv, cwd=project.repo, capture_output=True, text=True, timeout=120, check=False)


def refused_then_passed(project: Project) -> tuple[str, str]:
    """Push the flaw (refused: the remote keeps its head), then the clean code (accepted); both outputs."""
    flawed = commit(project.repo, FLAW, "ping")
    refused = push(project.repo)
    assert refused.returncode != 0, refused.stdout
    assert "BLOCK" in refused.stdout and "ping" in refused.stdout and "push refused" in refused.stdout
    assert git(project.remote, "rev-parse", "main") == project.base
    store = SqlEventStore.from_url(f"sqlite:///{project.tmp / 'state' / 'events.sqlite'}")
    events = store.read_stream(f"push/{flawed}")
    assert [e.type for e in events][:2] == ["PushReceived", "DecisionMade"]
    answer = events[1].meta["message_id"]
    assert events[1].meta["producer"] == DecidePush.TASK and store.is_handled(DecidePush.TASK, answer)
    git(project.repo, "reset", "-q", "--hard", project.base)
    clean = commit(project.repo, CLEAN, "ping, without a shell")
    passed = push(project.repo)
    assert passed.returncode == 0, passed.stdout
    assert git(project.remote, "rev-parse", "main") == clean
    return refused.stdout, passed.stdout


def test_a_hook_in_git_hooks_refuses_the_flaw_and_passes_clean_code(project: Project) -> None:
    installed = install(project)
    assert installed.returncode == 0, installed.stderr
    hook = project.repo / ".git" / "hooks" / "pre-push"
    assert PRE_PUSH_MARK in hook.read_text() and str(hook) in installed.stdout
    refused, passed = refused_then_passed(project)
    assert "1 of 1 ref(s) decided by this process" in refused  # no worker was started for the push
    assert "decided by this process" in passed and not (project.tmp / "state" / "worker.log").exists()


def test_core_hooks_path_gets_the_hook_and_a_hook_already_there_runs_first(project: Project) -> None:
    git(project.repo, "config", "core.hooksPath", ".githooks")
    folder = project.repo / ".githooks"
    folder.mkdir()
    (folder / "pre-push").write_text('#!/bin/sh\necho "lint hook for $1" >&2\n')
    (folder / "pre-push").chmod(0o755)
    installed = install(project)
    assert installed.returncode == 0, installed.stderr
    assert PRE_PUSH_MARK in (folder / "pre-push").read_text() and (folder / "pre-push.local").exists()
    assert not (project.repo / ".git" / "hooks" / "pre-push").exists()  # git would never run it there
    refused, passed = refused_then_passed(project)
    assert "lint hook for origin" in refused and "lint hook for origin" in passed


def test_pre_commit_runs_the_manifests_hook_with_its_variables(project: Project) -> None:
    pytest.importorskip("pre_commit")
    (manifest,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    # this repository's hook as a local one (pre-commit would otherwise build it a virtualenv from PyPI)
    hook = {**manifest, "language": "unsupported", "entry": manifest["entry"].replace("ouro", OURO, 1)}
    config = {"repos": [{"repo": "local", "hooks": [hook]}]}
    (project.repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    git(project.repo, "add", ".pre-commit-config.yaml")
    git(project.repo, "commit", "-q", "-m", "pre-commit")
    git(project.repo, "push", "-q", "--no-verify", "origin", "main")
    project = Project(project.tmp, project.repo, project.remote, git(project.repo, "rev-parse", "HEAD"))
    done = subprocess.run(
        [str(BIN / "pre-commit"), "install", "--hook-type", "pre-push"],
        cwd=project.repo,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    refused, passed = refused_then_passed(project)
    assert "ouro pre-push (the decider judges the pushed commits)" in refused  # pre-commit's own report
    assert (
        "1 of 1 ref(s) decided" in refused and "1 of 1 ref(s) decided" in passed
    )  # verbose: shown on success
    again = install(project)  # pre-commit owns .git/hooks/pre-push now: ours is not forced on it
    assert again.returncode == 1 and "pre-commit runs the repository's hooks" in again.stderr


def test_a_worker_serving_the_decider_queue_decides_the_push(
    project: Project, redis_url: str, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "workers"))
    from _fleet import Fleet, wait_for

    monkeypatch.setenv("OURO_BROKER_URL", redis_url)
    monkeypatch.setenv("OURO_DATABASE_URL", pg_url)
    fleet = Fleet(project.tmp, redis_url, pg_url, OURO_ROOTS=str(project.tmp))
    head = commit(project.repo, FLAW, "ping")
    line = f"refs/heads/main {head} refs/heads/main {project.base}\n"
    argv = [OURO, "pre-push", "origin", str(project.remote), "--repo", str(project.repo)]
    try:
        alone = subprocess.run(argv, input=line, capture_output=True, text=True, timeout=120, check=False)
        assert alone.returncode == 1 and "decided by this process" in alone.stderr, alone.stderr
        fleet.start_worker(queues="decider", name="decider")
        wait_for(lambda: _serves(redis_url, pg_url, project.tmp), 60, "the worker to serve the decider queue")
        git(project.repo, "commit", "-q", "--amend", "-m", "ping again")
        line = f"refs/heads/main {git(project.repo, 'rev-parse', 'HEAD')} refs/heads/main {project.base}\n"
        queued = subprocess.run(argv, input=line, capture_output=True, text=True, timeout=120, check=False)
        assert queued.returncode == 1 and "decided by the decider worker" in queued.stderr, (
            queued.stderr + fleet.logs()
        )
        assert "BLOCK" in queued.stderr
    finally:
        fleet.stop()


def _serves(redis_url: str, pg_url: str, tmp: Path) -> bool:
    from ouroboros_gates.ops.pushes import worker_serves
    from ouroboros_gates.schemas.settings import Settings

    return worker_serves(Settings(broker_url=redis_url, database_url=pg_url, state=tmp / "state"))


def test_pre_commits_variables_name_the_push(project: Project) -> None:
    head = commit(project.repo, FLAW, "ping")
    top, key = project.repo, "acme/shop"
    assert pre_commit_pushes({}, top, key) is None  # not run by pre-commit: git's stdin is read
    given = {
        "PRE_COMMIT": "1",
        "PRE_COMMIT_FROM_REF": project.base,
        "PRE_COMMIT_TO_REF": head,
        "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main",
        "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main",
    }
    (found,) = pre_commit_pushes(given, top, key) or []
    assert (found.ref, found.base, found.head, found.path) == (
        "refs/heads/main",
        project.base,
        head,
        str(top),
    )
    named = pre_commit_pushes({"PRE_COMMIT_ORIGIN": "origin/main", "PRE_COMMIT_SOURCE": "HEAD"}, top, key)
    assert named is not None and (named[0].base, named[0].head) == (
        project.base,
        head,
    )  # before pre-commit 2.2
    # every commit new to the remote, the root included: pre-commit names the branch alone
    (whole,) = (
        pre_commit_pushes({"PRE_COMMIT": "1", "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main"}, top, key) or []
    )
    assert (whole.base, whole.head) == (NEW, head)
    assert pre_commit_pushes({"PRE_COMMIT": "1"}, top, key) == []  # `pre-commit run` without refs
    with pytest.raises(OuroError, match="PRE_COMMIT_TO_REF='no-such-ref': not a commit of"):
        pre_commit_pushes({"PRE_COMMIT": "1", "PRE_COMMIT_TO_REF": "no-such-ref"}, top, key)


def test_the_hooks_folder_is_where_git_runs_hooks(project: Project) -> None:
    repo = project.repo
    assert hooks_folder(cwd=repo) == repo / ".git" / "hooks"
    assert hooks_folder(repo / ".git") == repo / ".git" / "hooks"
    git(repo, "worktree", "add", "-q", str(project.tmp / "side"))
    assert (
        hooks_folder(cwd=project.tmp / "side") == repo / ".git" / "hooks"
    )  # a linked worktree: the main one's
    git(repo, "config", "core.hooksPath", ".husky/_")
    (repo / "sub").mkdir()
    assert hooks_folder(cwd=repo / "sub") == repo / ".husky" / "_"  # relative to the work tree's top
    (project.tmp / "gitconfig").write_text(f"[core]\n\thooksPath = {project.tmp / 'shared-hooks'}\n")
    git(repo, "config", "--unset", "core.hooksPath")
    assert hooks_folder(cwd=repo) == project.tmp / "shared-hooks"  # the user's global setting
    with pytest.raises(ConfigurationError, match="not a git repository"):
        hooks_folder(cwd=project.tmp)


@pytest.mark.parametrize(
    ("manager", "text", "advice"),
    [
        (
            "pre-commit",
            "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n",
            "ouro-pre-push",
        ),
        ("husky", '#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n', '`ouro pre-push "$@"` to .husky/pre-push'),
        ("lefthook", '#!/bin/sh\ncall_lefthook run "pre-push" "$@"\n', "lefthook.yml"),
    ],
)
def test_a_hook_managers_hook_is_left_alone_with_how_to_add_ours(
    tmp_path: Path, manager: str, text: str, advice: str
) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "pre-push").write_text(text)
    (hooks / "h").write_text("#!/bin/sh\n")  # husky 9's runner beside its stubs
    with pytest.raises(ConfigurationError, match=f"{manager} runs the repository's hooks") as refused:
        install_pre_push(hooks)
    assert advice in str(refused.value)
    assert (hooks / "pre-push").read_text() == text and not (hooks / "pre-push.local").exists()


def test_a_tracked_hook_is_left_alone(project: Project) -> None:
    folder = project.repo / "githooks"
    folder.mkdir()
    (folder / "pre-push").write_text("#!/bin/sh\nexit 0\n")
    git(project.repo, "add", "githooks/pre-push")
    with pytest.raises(ConfigurationError, match="the repository tracks it"):
        install_pre_push(folder)
    assert (folder / "pre-push").read_text() == "#!/bin/sh\nexit 0\n"

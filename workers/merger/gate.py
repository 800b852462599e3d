"""The merge gate: the project's checks on the head, plus ``ouro miner test`` for a miner pull request.

The default gate refuses a head when any check the forge reports on it exited non-zero (one line per
failing check), and, for a pull request labelled ``miner`` whose head the repository holds and whose
branch is ``miner/<name>-<prefix>``, runs ``ouro miner test <name>`` in a checkout of that head.

``OURO_MERGE_GATE`` replaces it with a command of your own, split like a shell line but run as an
argument list (never a shell); ``{pr}``, ``{head}`` and ``{base}`` in an argument are replaced by the
pull request's number, head and base. It runs in a checkout of the head when the repository holds it,
and exit 0 passes; otherwise the last lines of its output are the refusal.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

from ouroboros_gates.forge import PullRequest
from ouroboros_gates.forge.git import git
from ouroboros_gates.schemas.errors import ConfigurationError, GitError
from ouroboros_gates.workers.merger.train import Gate, GateResult

__all__ = ["checks_gate", "command_gate", "default_gate", "make_gate"]

_MINER_BRANCH = re.compile(r"^miner/([a-z][a-z0-9_-]*?)-[0-9a-f]{4,}$")
_TAIL = 20
_TIMEOUT_S = 1800.0


def checks_gate(pull: PullRequest) -> GateResult:
    """The project's checks as the forge reports them on the head: every one must have exited 0."""
    failing = [
        f"check {c.name} (`{c.command}`) exited {c.exit_code}" for c in pull.checks if c.exit_code != 0
    ]
    return GateResult(not failing, tuple(failing))


def default_gate(repository: Path | None) -> Gate:
    """The project's checks, then ``ouro miner test <name>`` for a miner pull request held in
    ``repository``."""

    def gate(pull: PullRequest) -> GateResult:
        checks = checks_gate(pull)
        match = _MINER_BRANCH.match(pull.head_ref)
        if not checks.passed or repository is None or "miner" not in pull.labels or match is None:
            return checks
        argv = [
            sys.executable,
            "-c",
            "from ouroboros_gates.ops.cli import main; main()",
            "miner",
            "test",
            match.group(1),
        ]
        return _run_in_checkout(argv, repository, pull)

    return gate


def command_gate(line: str, repository: Path | None) -> Gate:
    """The configured gate command (``OURO_MERGE_GATE``), run by argument list."""
    try:
        template = shlex.split(line)
    except ValueError as exc:
        raise ConfigurationError(f"OURO_MERGE_GATE: {exc}") from exc
    if not template:
        raise ConfigurationError("OURO_MERGE_GATE: empty command")

    def gate(pull: PullRequest) -> GateResult:
        values = {"pr": str(pull.number), "head": pull.head_sha, "base": pull.base}
        argv = [arg.format_map(values) for arg in template]
        return _run_in_checkout(argv, repository, pull)

    return gate


def make_gate(line: str | None, repository: Path | None) -> Gate:
    """The configured gate, or the default one."""
    return command_gate(line, repository) if line else default_gate(repository)


def _has(repository: Path, sha: str) -> bool:
    found = git(
        "cat-file",
        "-e",
        "--end-of-options",
        f"{sha}^{{commit}}",
        cwd=repository,
        check=False,
        user_config=True,
    )
    return found.returncode == 0


def _run_in_checkout(argv: Sequence[str], repository: Path | None, pull: PullRequest) -> GateResult:
    """Run ``argv`` in a detached worktree of the head (removed after), or where we are without one."""
    if repository is None or not _has(repository, pull.head_sha):
        return _run(argv, Path.cwd())
    with tempfile.TemporaryDirectory(prefix="ouro-gate-") as scratch:
        tree = Path(scratch) / "head"
        done = git(
            "worktree",
            "add",
            "--detach",
            "--quiet",
            str(tree),
            pull.head_sha,
            cwd=repository,
            check=False,
            user_config=True,
        )
        if done.returncode != 0:
            return GateResult(
                False, (f"cannot check out {pull.head_sha[:12]}: {done.stderr.decode().strip()}",)
            )
        try:
            return _run(argv, tree)
        finally:
            with suppress(GitError):  # a worktree left behind must not hide the gate's result
                git("worktree", "remove", "--force", str(tree), cwd=repository, check=False, user_config=True)


def _run(argv: Sequence[str], cwd: Path) -> GateResult:
    try:
        done = subprocess.run(
            list(argv), cwd=cwd, capture_output=True, timeout=_TIMEOUT_S, check=False, env=dict(os.environ)
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return GateResult(False, (f"the gate command {argv[0]!r} could not run: {exc}",))
    if done.returncode == 0:
        return GateResult(True)
    output = (done.stdout + done.stderr).decode("utf-8", "replace").strip().splitlines()
    tail = tuple(line for line in output[-_TAIL:] if line.strip())
    return GateResult(False, (f"the gate exited {done.returncode}", *tail))

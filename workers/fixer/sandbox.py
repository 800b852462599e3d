"""Sandboxed launch with bubblewrap: the fixer agent sees the machine read-only and the state hidden.

Inside the sandbox the whole filesystem is mounted read-only, the state directory is replaced by an
empty tmpfs (the event log, the broker, other sessions and their logs are out of sight), and only the
session's worktree, plus the git directory its commits land in and the local forge's writes directory
when the forge is local, are mounted back read-write. The environment is cleared except for what the
agent needs: ``PATH``, ``HOME`` (the worktree), ``TMPDIR`` (the session's own), the locale, and the
secrets named for it. Unattended
launch needs this: where ``bwrap`` is missing or cannot create its namespaces, fixers refuse and say why.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["AGENT_SECRETS", "Sandbox", "find_sandbox"]

#: The only variables of the worker's environment an agent receives (when they are set).
AGENT_SECRETS = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")
_PASSED = ("PATH", "LANG", "LC_ALL", "TERM", "TZ")


@dataclass(frozen=True)
class Sandbox:
    """A working ``bwrap``: wraps an agent's argument list."""

    bwrap: str

    def wrap(
        self,
        argv: Sequence[str],
        *,
        worktree: Path,
        writable: Sequence[Path],
        hidden: Sequence[Path],
        environ: Mapping[str, str],
        extra_env: Mapping[str, str],
        secrets: Sequence[str] = AGENT_SECRETS,
    ) -> list[str]:
        """The argument list running ``argv`` in the worktree with only ``writable`` paths writable."""
        wrapped = [self.bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc"]
        wrapped += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for path in hidden:
            wrapped += ["--tmpfs", str(path)]
        for path in (worktree, *writable):
            wrapped += ["--bind", str(path), str(path)]
        wrapped += ["--chdir", str(worktree), "--clearenv"]
        env = {key: environ[key] for key in (*_PASSED, *secrets) if key in environ}
        env |= {"HOME": str(worktree), **extra_env}
        for key, value in sorted(env.items()):
            wrapped += ["--setenv", key, value]
        return [*wrapped, "--", *argv]


def find_sandbox() -> tuple[Sandbox | None, str]:
    """A working sandbox, or None and why there is none (the reason ``--fixers`` prints)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, "no sandbox: bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)"
    probe = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"no sandbox: {bwrap} cannot run: {exc}"
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
        return None, f"no sandbox: {bwrap} cannot create its namespaces here ({reason})"
    return Sandbox(bwrap), f"sandboxed by {bwrap}"

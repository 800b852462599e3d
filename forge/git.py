"""The one place Ouroboros starts ``git``: an argument list (never a shell), a hardened environment, a
timeout, and one error.

The environment: no system config, no prompts, the C locale, none of the repository variables git exports to
its hooks (``GIT_DIR`` and the like, or injected config), and (unless ``user_config``) no global config
either, so a repository Ouroboros made answers the same on every machine. A repository of the user's (a
checkout scanned, pushed from, or hooked) is read with the user's global config kept, since that is where
``safe.directory`` lives. Whatever goes wrong (git missing, a timeout, a non-zero exit when ``check``)
raises ``schemas.errors.GitError`` naming the command and git's last words; nothing else in the project
runs git (a test holds every other module to that).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from ouroboros_gates.schemas.errors import GitError

__all__ = ["TIMEOUT_S", "git", "git_text"]

TIMEOUT_S = 120.0
_HARDENED = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
_INHERITED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
              "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
              "GIT_CONFIG_COUNT")  # fmt: skip
"""What git exports to its hooks (and what injects config): never carried into a command run from here."""


def git(
    *args: str,
    cwd: Path | str | None = None,
    input: bytes | None = None,
    check: bool = True,
    timeout: float = TIMEOUT_S,
    user_config: bool = False,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git [-C cwd] args…`` and return what it did; raise ``GitError`` when it cannot run, times out, or
    (with ``check``) exits non-zero. ``env`` adds variables (an identity, say) over the hardened ones."""
    argv = [*(["-C", str(cwd)] if cwd is not None else []), *args]
    inherited = {
        key: value
        for key, value in os.environ.items()
        if key not in _INHERITED and not key.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    environment = {**inherited, **_HARDENED, **(env or {})}
    if not user_config:
        environment["GIT_CONFIG_GLOBAL"] = os.devnull
    try:
        done = subprocess.run(
            ["git", *argv], input=input, capture_output=True, timeout=timeout, env=environment, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise GitError(list(args), f"timed out after {timeout:.0f} s", timed_out=True) from exc
    except OSError as exc:
        raise GitError(list(args), f"cannot run git: {exc}") from exc
    if check and done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(list(args), said[-1] if said else f"exit {done.returncode}", done.returncode)
    return done


def git_text(*args: str, cwd: Path | str | None = None, user_config: bool = False) -> str:
    """Git's standard output as text, stripped (``check`` on)."""
    return git(*args, cwd=cwd, user_config=user_config).stdout.decode("utf-8", "replace").strip()

"""The one place Ouroboros starts ``git``: an argument list (never a shell), a hardened environment, a
timeout, and one error.

The environment: no system config, no prompts, the C locale, none of the repository variables git exports
to its hooks (``GIT_DIR`` and the like, or injected config), and (unless ``user_config``) no global config
either, so a repository Ouroboros made answers the same on every machine. A repository of the user's (a
checkout scanned, pushed from, or hooked) is read with the user's global config kept, since that is where
``safe.directory`` lives. Every command runs with hooks and the file-system monitor switched off on its
command line (which beats any repository's config): Ouroboros never runs a repository's code on its
behalf.

A repository an agent wrote (a fixer's checkout) is touched only ``sealed``: the global config is a file
Ouroboros wrote (``seal``: hooks off, no fsmonitor, only the ``file`` protocol, objects checked on
transfer, ``safe.directory`` naming exactly the repositories involved), which, unlike ``-c``, also
reaches the ``upload-pack`` git starts in the other repository; the only command run against such a
repository is a fetch from it, since ``upload-pack`` is the one git command made safe to run in an
untrusted repository. Whatever goes wrong (git missing, a timeout, a non-zero exit when ``check``) raises
``schemas.errors.GitError`` naming the command and git's last words; nothing else in the project runs git
(a test holds every other module to that).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from ouroboros_gates.schemas.errors import GitError

__all__ = ["TIMEOUT_S", "git", "git_text", "seal"]

TIMEOUT_S = 120.0
_HARDENED = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
_INHERITED = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
)
"""What git exports to its hooks (and what injects config): never carried into a command run from here."""
_PROGRAMS = (
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_PROXY_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
)
"""Programs the worker's environment may name for git: not carried into a sealed command either."""
_OFF = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
_SEALED_ENV = {"GIT_ALLOW_PROTOCOL": "file", "GIT_PROTOCOL_FROM_USER": "0", "GIT_ASKPASS": "/bin/false"}
_SEALED_CONFIG = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("protocol.allow", "never"),
    ("protocol.file.allow", "always"),
    ("transfer.fsckObjects", "true"),
    ("credential.helper", ""),
)


def git(
    *args: str,
    cwd: Path | str | None = None,
    input: bytes | None = None,
    check: bool = True,
    timeout: float = TIMEOUT_S,
    user_config: bool = False,
    env: Mapping[str, str] | None = None,
    sealed: Path | None = None,
    hooks_as_configured: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git [-C cwd] args…`` and return what it did; raise ``GitError`` when it cannot run, times
    out, or (with ``check``) exits non-zero. ``env`` adds variables (an identity, say) over the hardened
    ones; ``sealed`` (a file ``seal`` wrote) replaces every config but the repository's own. Hooks and the
    fsmonitor are off unless ``hooks_as_configured``, for a query that runs neither and asks where the hooks
    are."""
    argv = [*(["-C", str(cwd)] if cwd is not None else []), *(() if hooks_as_configured else _OFF), *args]
    environment = _environment(env or {}, user_config, sealed)
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


def _environment(env: Mapping[str, str], user_config: bool, sealed: Path | None) -> dict[str, str]:
    """This process's environment hardened for git, ``env`` over it; the global config the one ``sealed``
    names, or none unless ``user_config``."""
    inherited = {
        key: value
        for key, value in os.environ.items()
        if key not in _INHERITED and not key.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    environment = {**inherited, **_HARDENED, **env}
    if sealed is not None:
        environment = {k: v for k, v in environment.items() if k not in _PROGRAMS}
        environment |= {**_SEALED_ENV, "GIT_CONFIG_GLOBAL": str(sealed)}
    elif not user_config:
        environment["GIT_CONFIG_GLOBAL"] = os.devnull
    return environment


def git_text(
    *args: str, cwd: Path | str | None = None, user_config: bool = False, hooks_as_configured: bool = False
) -> str:
    """Git's standard output as text, stripped (``check`` on)."""
    done = git(*args, cwd=cwd, user_config=user_config, hooks_as_configured=hooks_as_configured)
    return done.stdout.decode("utf-8", "replace").strip()


def seal(config: Path, *repositories: Path) -> Path:
    """Write ``config``, the only global config of ``sealed`` commands, trusting exactly ``repositories``
    (each as itself and as its ``.git``, whoever owns it); returns ``config``."""
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_bytes(b"")
    write = ("config", "--file", str(config))
    for key, value in _SEALED_CONFIG:
        git(*write, key, value)
    for repository in repositories:
        for path in (repository, repository / ".git"):
            git(*write, "--add", "safe.directory", str(path))
    return config

"""Where the state directory lives when none is given: outside the user's repository, one folder per project.

    $XDG_STATE_HOME/ouroboros/<project>          Linux and the other Unixes (default ~/.local/state)
    ~/Library/Application Support/ouroboros/<project>   macOS
    %LOCALAPPDATA%/ouroboros/<project>           Windows

``<project>`` is the repository root's folder name and 12 hex digits of the SHA-256 of its real path
(``ouroboros-3f2a9c0d11e4``): stable for a checkout, different for two clones, never a path. The root is
the nearest folder at or above the working directory holding ``.git`` (a worktree's ``.git`` file
counts); outside a repository it is the working directory itself.

A state directory someone puts inside a checkout (``OURO_STATE=.ouroboros``, ``--state``) is git-ignored when
it is made: a ``.gitignore`` holding ``*`` inside it, so nothing recorded there (tool inputs, prompts) is ever
staged by ``git add -A``. Standard library only: the hook imports this module when it has no ``--state``.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys

__all__ = [
    "GITIGNORE",
    "default_state_dir",
    "inside_checkout",
    "make_state_dir",
    "project_key",
    "project_root",
]

APP = "ouroboros"
GITIGNORE = "*\n"
"""What a state directory inside a checkout holds in its ``.gitignore``: everything in it is ignored."""

_NOT_IN_KEY = re.compile(r"[^A-Za-z0-9_.-]+")


def _checkout_above(start: str) -> str | None:
    """The nearest folder at or above ``start`` holding ``.git``; None when there is none."""
    here = os.path.realpath(start)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def project_root(start: str | None = None) -> str:
    """The repository root at or above ``start`` (default: the working directory), else ``start`` itself."""
    where = os.path.realpath(start or os.getcwd())
    return _checkout_above(where) or where


def project_key(root: str) -> str:
    """A folder name for a project: its root's name and 12 hex digits of its real path's SHA-256."""
    real = os.path.realpath(root)
    name = _NOT_IN_KEY.sub("-", os.path.basename(real)).strip("-.")[:40] or "root"
    return f"{name}-{hashlib.sha256(os.fsencode(real)).hexdigest()[:12]}"


def _user_state_home() -> str:
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support")
    if sys.platform == "win32":
        return os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
    xdg = os.environ.get("XDG_STATE_HOME", "")
    # The XDG rules ignore a relative value: it would depend on the working directory.
    return xdg if os.path.isabs(xdg) else os.path.join(home, ".local", "state")


def default_state_dir(start: str | None = None) -> str:
    """The state directory of the project at ``start`` (default: the working directory), in the user's
    state directory; not created."""
    return os.path.join(_user_state_home(), APP, project_key(project_root(start)))


def inside_checkout(path: str) -> bool:
    """Whether ``path`` lies inside a git checkout (a folder above it holds ``.git``)."""
    return _checkout_above(os.path.dirname(os.path.realpath(path))) is not None


def make_state_dir(path: str) -> str:
    """Create the state directory ``path`` (absolute) if needed; one inside a checkout gets a ``.gitignore``
    of ``*`` unless it has one already. Returns ``path``."""
    os.makedirs(path, exist_ok=True)
    ignore = os.path.join(path, ".gitignore")
    if not os.path.exists(ignore) and inside_checkout(path):
        try:
            with open(ignore, "x", encoding="utf-8") as handle:
                handle.write(GITIGNORE)
        except FileExistsError:  # another process made it first
            pass
    return path

"""The mount part of a bwrap command, built in order so that every path the agent is given is reachable.

bwrap makes a missing parent directory of a mount point with a mode the agent's uid may not pass, and the
host's own directories keep theirs. So each mount is preceded by what it needs: a parent lying in an empty
tmpfs is made with ``--dir`` (0755) first; a parent lying in a bind of the host must already let the
agent's uid through, or ``SandboxError`` names the closed directory. Pure: it only builds arguments.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ouroboros_gates.schemas.errors import PermanentError

__all__ = ["Layout", "SandboxError"]


class SandboxError(PermanentError):
    """A session's paths cannot be laid out in the sandbox (the message names the path)."""


class Layout:
    """Mount arguments over the host's root bound read-only, for an agent running as ``uid``."""

    def __init__(self, uid: int) -> None:
        self.uid = uid
        self.args: list[str] = ["--ro-bind", "/", "/"]
        self._mounts: list[tuple[Path, bool]] = [(Path("/"), False)]  # (mount point, is an empty tmpfs)
        self._made: set[Path] = set()

    def tmpfs(self, path: Path, perms: str, size: int | None = None) -> None:
        """Empty ``path`` (a tmpfs with ``perms``, at most ``size`` bytes)."""
        self._reach(path)
        self.args += ["--perms", perms, *(["--size", str(size)] if size else []), "--tmpfs", str(path)]
        self._mounts.append((path, True))

    def bind(self, path: Path, *, writable: bool) -> None:
        """Show the host's ``path`` at its own path, read-write or read-only."""
        self._reach(path)
        self.args += ["--bind" if writable else "--ro-bind", str(path), str(path)]
        self._mounts.append((path, False))

    def covered(self, path: Path) -> bool:
        """Whether ``path`` lies in an empty tmpfs (not shown from the host)."""
        return self._cover(path)[1]

    def _cover(self, path: Path) -> tuple[Path, bool]:
        """The innermost mount holding ``path`` (the last one mounted, when two share a point)."""
        holding = [(point, empty) for point, empty in self._mounts if point == path or point in path.parents]
        return max(reversed(holding), key=lambda mount: len(mount[0].parts))

    def _reach(self, path: Path) -> None:
        for parent in reversed(path.parents):
            point, empty = self._cover(parent)
            if parent == point or parent in self._made:
                continue
            if empty:
                self._made.add(parent)
                self.args += ["--perms", "0755", "--dir", str(parent)]
            elif not _passable(parent, self.uid):
                raise SandboxError(
                    f"{path}: the fixer agent (uid {self.uid}) cannot reach it: {parent} is closed"
                )


def _passable(folder: Path, uid: int) -> bool:
    """Whether ``uid`` may pass through the host's ``folder``: as the worker itself, what the kernel says;
    as another uid (with no groups), other-execute or its owner's execute bit."""
    if uid == os.getuid():
        return os.access(folder, os.X_OK)
    try:
        found = os.stat(folder)
    except OSError:
        return False
    return bool(found.st_mode & stat.S_IXOTH) or (found.st_uid == uid and bool(found.st_mode & stat.S_IXUSR))

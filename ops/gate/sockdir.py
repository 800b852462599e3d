"""Where the gate server's socket lives: in a folder only its user can enter (hot path: stdlib only).

    $XDG_RUNTIME_DIR/ouroboros/gate-<h>.sock     when $XDG_RUNTIME_DIR is the user's own, entered by no one
    else
    $TMPDIR/ouroboros-<uid>/gate-<h>.sock         otherwise (/tmp when $TMPDIR is unset or not absolute)

``<h>`` is a 64-bit FNV-1a digest of the state directory's path: one server per state directory. The
socket is where the hook takes its decisions from, so whoever could bind it could answer ``allow`` to
every call: the folder is created with mode 0700, and before every use (by the hook before it connects,
by the server before it binds) it must be a real folder, owned by this user, that no group or other user
may enter; anything else (a folder another user made first at the expected name, a link, mode 0755) is
refused with ``UnsafeFolder`` naming the folder and why, and the hook then decides without the server
(open, or closed when ``OURO_GATE_FAIL=closed``). No path another user can bind is ever used.
"""

from __future__ import annotations

import os
import stat

__all__ = ["UnsafeFolder", "socket_dir", "socket_name", "socket_path"]

_SOCKET_MAX = 100  # sun_path holds 108 bytes on Linux, 104 on macOS
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1


class UnsafeFolder(OSError):
    """The socket's folder is not private to this user (named, with the reason)."""


def _digest(text: str) -> str:
    # FNV-1a: the hook would otherwise import hashlib (and OpenSSL) on every call, for a name.
    value = _FNV_OFFSET
    for byte in os.fsencode(text):
        value = ((value ^ byte) * _FNV_PRIME) & _MASK
    return f"{value:016x}"


def _not_private(folder: str) -> str | None:
    """Why ``folder`` is not a folder only this user can enter; None when it is."""
    try:
        info = os.lstat(folder)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if not stat.S_ISDIR(info.st_mode):
        return "is not a folder (a link or another file)"
    if info.st_uid != os.geteuid():
        return f"is owned by uid {info.st_uid}, not {os.geteuid()}"
    if info.st_mode & 0o077:
        return f"has mode {info.st_mode & 0o777:04o}: others may enter it (0700 wanted)"
    return None


def _candidate() -> str:
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if _fits(runtime) and _not_private(runtime) is None:
        return os.path.join(runtime, "ouroboros")
    temp = os.environ.get("TMPDIR", "")
    return os.path.join(temp if _fits(temp) else "/tmp", f"ouroboros-{os.geteuid()}")


def _fits(base: str) -> bool:
    """Whether ``base`` is absolute and short enough for a socket path in a folder below it."""
    return os.path.isabs(base) and len(os.fsencode(base)) <= _SOCKET_MAX - 50


def socket_dir() -> str:
    """The folder of the gate sockets, created (0700) when absent; ``UnsafeFolder`` when it is not private."""
    folder = _candidate()
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UnsafeFolder(f"{folder}: cannot be made ({exc.strerror})") from exc
    why = _not_private(folder)
    if why is not None:
        raise UnsafeFolder(f"{folder} {why}; the gate socket is kept only in a folder no one else can enter")
    return folder


def socket_name(state: str) -> str:
    """The file name of the gate server's socket for the state directory ``state``."""
    return f"gate-{_digest(os.path.abspath(state))}.sock"


def socket_path(state: str) -> str:
    """The gate server's socket for the state directory ``state`` (see the module docstring)."""
    return os.path.join(socket_dir(), socket_name(state))

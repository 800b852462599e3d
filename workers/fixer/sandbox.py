"""Sandboxed launch with bubblewrap: the fixer agent runs with no privilege, no network, no view of the state.

What the agent gets (``Sandbox.command``):

- **no privilege**: as an unprivileged uid even when the worker is root (root: bwrap sets up the mounts,
  then ``setpriv`` drops to uid/gid ``AGENT_UID`` with no groups, every capability gone from every set and
  no new privileges; not root: a user namespace of its own, no capabilities, no nested user namespaces),
  and a seccomp program (``seccomp.py``) on every process of the sandbox;
- **its own namespaces**: pid, ipc, uts, cgroup and network; the network has nothing but loopback, and an
  agent that needs a host reaches it only through the worker's allow-list proxy (``proxy.py``), whose
  port the in-sandbox bridge (``bridge.py``) opens on that loopback; with no allowed host there is no
  bridge and no way out at all;
- **a read-only machine with the sensitive places emptied**: ``/`` bound read-only; ``/tmp``, ``/var/tmp``,
  ``/run`` (database and Docker sockets), ``/root``, ``/home`` and the state directory replaced by empty
  tmpfs (the worker's own Python and Ouroboros shown again read-only when they lie there: the bridge runs
  on that interpreter, an agent runs the miner's test with that package); a new ``/dev`` and ``/proc``;
  only the worktree and the paths named writable are bound back read-write (``grant`` hands them to the
  agent's uid), and the paths named readable read-only, each at its own path;
- **an allow-listed environment**: ``PATH``, the locale, ``TERM``, ``TZ``, the secrets named for the agent,
  ``HOME`` (the worktree), ``TMPDIR`` (``/tmp``), the proxy variables, and what the session adds.

Unattended launch needs all of it: where ``bwrap`` (or, for root, ``setpriv``) is missing, libseccomp
cannot be loaded, or the namespaces cannot be made, ``find_sandbox`` says why and fixers refuse.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import ouroboros_gates
from ouroboros_gates.workers.fixer.layout import Layout, SandboxError
from ouroboros_gates.workers.fixer.seccomp import SeccompUnavailable, compiled_filter

__all__ = [
    "AGENT_SECRETS",
    "AGENT_UID",
    "HIDDEN",
    "Mounts",
    "Sandbox",
    "SandboxError",
    "agent_environment",
    "find_sandbox",
    "grant",
]

#: The only variables of the worker's environment an agent receives (when they are set).
AGENT_SECRETS = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")
#: The uid and gid the agent runs as when the worker is root (``nobody``).
AGENT_UID = 65534
#: Emptied in every sandbox (each an empty tmpfs, when it is a directory here).
HIDDEN = (Path("/tmp"), Path("/var/tmp"), Path("/run"), Path("/root"), Path("/home"))
_PASSED = ("PATH", "LANG", "LC_ALL", "TERM", "TZ")
_SCRATCH = {Path("/tmp"), Path("/var/tmp")}
_TMP_BYTES = 1 << 30
_ROOT_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")  # setpriv's, dropped by setpriv itself
_BRIDGE = Path(__file__).with_name("bridge.py")


@dataclass(frozen=True)
class Mounts:
    """What one session's sandbox shows besides the read-only machine."""

    worktree: Path
    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Sandbox:
    """A working ``bwrap`` (and ``setpriv`` when the worker is root): builds a session's argument list."""

    bwrap: str
    setpriv: str | None = None
    uid: int = field(default_factory=os.getuid)

    @property
    def drops_privilege(self) -> bool:
        """Whether the agent is moved to ``AGENT_UID`` (the worker is root)."""
        return self.setpriv is not None

    @property
    def isolation(self) -> str:
        """Which isolation the agent gets here, in words (the console and the session record say it)."""
        if self.drops_privilege:
            who = f"uid {AGENT_UID} dropped from root by setpriv, no capabilities, no new privileges"
        else:
            who = f"a user namespace of its own as uid {self.uid} (the worker's), no capabilities"
        return f"bwrap: {who}, seccomp, no network but the allow-list"

    @property
    def agent_uid(self) -> int:
        """The uid the agent's files must belong to."""
        return AGENT_UID if self.drops_privilege else self.uid

    def command(
        self,
        argv: Sequence[str],
        mounts: Mounts,
        env: Mapping[str, str],
        *,
        seccomp_fd: int,
        control_fd: int | None = None,
    ) -> list[str]:
        """The argument list running ``argv`` sandboxed; ``control_fd`` (the proxy's) gives it a network."""
        command = [
            self.bwrap,
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]
        command += self._privilege_args()
        command += self._layout(mounts)
        command += ["--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--tmpfs", "/dev/shm"]
        command += ["--chdir", str(mounts.worktree), "--clearenv"]
        command += _environment_args(env)
        command += ["--seccomp", str(seccomp_fd), "--"]
        command += self._drop_to_agent()
        command += _bridge_args(control_fd)
        return [*command, *argv]

    def _privilege_args(self) -> list[str]:
        """As root, every capability dropped but those it needs; else a user namespace of its own, with no
        nested one."""
        if self.drops_privilege:
            return ["--cap-drop", "ALL", *(a for cap in _ROOT_CAPS for a in ("--cap-add", cap))]
        return ["--unshare-user", "--disable-userns"]

    def _drop_to_agent(self) -> list[str]:
        """With setpriv (a root worker), the command that becomes the agent's uid with no privilege left."""
        if self.setpriv is None:
            return []
        return [
            self.setpriv,
            f"--reuid={AGENT_UID}",
            f"--regid={AGENT_UID}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]

    def _layout(self, mounts: Mounts) -> list[str]:
        """Empty the hidden places, show the worker's installation again, hide the state, then bind the
        session's paths: each at its own path, its parents made reachable (``layout.Layout``)."""
        layout = Layout(self.agent_uid)
        emptied = _cover_roots(layout)
        _show_installation(layout)
        emptied += _hide(layout, mounts.hidden)
        layout.bind(_resolved(mounts.worktree), writable=True)
        for path in mounts.writable:
            layout.bind(_resolved(path), writable=True)
        for path in mounts.readable:
            layout.bind(_resolved(path), writable=False)
        # An emptied place other than the scratch folders is read-only once laid out (the binds in it are
        # mounts of their own): in a user namespace its tmpfs belongs to the agent, which could otherwise
        # make the paths it aims at there (the state's event log, /run's sockets) and fill memory with them.
        for path in emptied:
            layout.args += ["--remount-ro", str(path)]
        return layout.args


def _environment_args(env: Mapping[str, str]) -> list[str]:
    """The agent's whole environment, in key order (bwrap clears the worker's)."""
    args: list[str] = []
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    return args


def _bridge_args(control_fd: int | None) -> list[str]:
    """With the proxy's ``control_fd``, the bridge that gives the agent its network (none without)."""
    if control_fd is None:
        return []
    return [
        _interpreter(),
        "-I",
        "-S",
        "-c",
        _BRIDGE.read_text(encoding="utf-8"),
        str(control_fd),
        "--",
    ]


def _cover_roots(layout: Layout) -> list[Path]:
    """An empty folder over each hidden place there is: the scratch ones writable by all, and bounded.
    Returns the emptied places other than the scratch ones."""
    emptied: list[Path] = []
    for root in HIDDEN:
        if root.is_dir() and not root.is_symlink():
            _cover(layout, root)
            emptied += [] if root in _SCRATCH else [root]
    return emptied


def _cover(layout: Layout, root: Path) -> None:
    """An empty folder over one hidden place: a scratch one writable by all and bounded in size."""
    scratch = root in _SCRATCH
    layout.tmpfs(root, "1777" if scratch else "0755", _TMP_BYTES if scratch else None)


def _show_installation(layout: Layout) -> None:
    """The worker's installation, where a hidden place covers it, shown again read-only."""
    for path in _installation():
        if layout.covered(path):
            layout.bind(path, writable=False)


def _hide(layout: Layout, hidden: Sequence[Path]) -> list[Path]:
    """An empty folder over each of the session's hidden folders not covered already; returns them."""
    emptied: list[Path] = []
    for path in map(_resolved, hidden):
        if not layout.covered(path) and path.is_dir():
            layout.tmpfs(path, "0755")
            emptied.append(path)
    return emptied


def agent_environment(
    environ: Mapping[str, str],
    worktree: Path,
    extra: Mapping[str, str],
    secrets: Sequence[str] = AGENT_SECRETS,
) -> dict[str, str]:
    """The agent's whole environment: the allow-listed variables of ``environ``, then the session's own."""
    kept = {key: environ[key] for key in (*_PASSED, *secrets) if key in environ}
    return {**kept, "HOME": str(worktree), "TMPDIR": "/tmp", **extra}


def grant(sandbox: Sandbox, *paths: Path) -> None:
    """Give the agent's uid the session's writable trees (root only), never following a link: a symlink
    is changed itself, and a file with a second hard link is left alone (it may be someone else's)."""
    if not sandbox.drops_privilege:
        return
    for path in paths:
        os.chown(path, AGENT_UID, AGENT_UID, follow_symlinks=False)
        os.chmod(path, 0o755)  # bwrap enters it (--chdir) before setpriv, as root without DAC_OVERRIDE
        _grant_below(path)


def _grant_below(path: Path) -> None:
    """Give the agent's uid everything under ``path`` that is only the session's."""
    for _, folders, files, folder_fd in os.fwalk(path):
        for name in (*folders, *files):
            found = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
            if _only_ours(found):
                os.chown(name, AGENT_UID, AGENT_UID, dir_fd=folder_fd, follow_symlinks=False)


def _only_ours(found: os.stat_result) -> bool:
    """A folder, or a file without a second hard link (one with a second may be someone else's)."""
    return stat.S_ISDIR(found.st_mode) or found.st_nlink == 1


def find_sandbox() -> tuple[Sandbox | None, str]:
    """A working sandbox, or None and why there is none (the reason ``--fixers`` prints)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, "no sandbox: bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)"
    setpriv = None
    if os.getuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            return None, "no sandbox: the worker is root and setpriv (util-linux) is not installed to drop it"
    sandbox = Sandbox(bwrap, setpriv)
    try:
        reason = _probe(sandbox)
    except (SeccompUnavailable, SandboxError, OSError) as exc:
        return None, f"no sandbox: {exc}"
    if reason:
        return None, f"no sandbox: {bwrap} cannot make the sandbox here ({reason})"
    return sandbox, f"sandboxed by {sandbox.isolation}"


def _probe(sandbox: Sandbox) -> str:
    """Run ``true`` under the full policy; what went wrong, or ``""``."""
    with tempfile.TemporaryDirectory(prefix="ouro-probe-") as folder, compiled_filter() as program:
        grant(sandbox, Path(folder))
        argv = sandbox.command(["true"], Mounts(Path(folder)), {}, seccomp_fd=program.fileno())
        try:
            done = subprocess.run(
                argv, capture_output=True, timeout=30, check=False, pass_fds=(program.fileno(),)
            )
        except subprocess.TimeoutExpired:
            return "the probe did not finish in 30 s"
    return (
        ""
        if done.returncode == 0
        else done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
    )


def _interpreter() -> str:
    """The real Python executable (a virtual environment's link may lie in an emptied place)."""
    return os.path.realpath(sys.executable)


def _installation() -> list[Path]:
    """The worker's own Python and Ouroboros (shown read-only when they lie in an emptied place): the
    bridge runs on that interpreter, and an agent runs the miner's test with that package."""
    package = Path(ouroboros_gates.__file__).resolve().parent.parent
    found = {_resolved(Path(sys.base_prefix)), _resolved(Path(sys.prefix)), package}
    return sorted(found, key=lambda path: len(path.parts))


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))

"""The fixer sandbox's seccomp program, compiled by libseccomp and handed to ``bwrap --seccomp``.

Namespaces leave a few ways out that only a syscall filter closes, so the agent is refused:

- sockets of any family but IPv4, IPv6 and netlink: a Unix socket reaches any listening socket file the
  sandbox can see (PostgreSQL's and Docker's live under ``/run``), whatever network namespace it is in, and
  vsock reaches the hypervisor; ``socketpair`` stays allowed (node and Python use it for their children);
- io_uring, which opens sockets without the ``socket`` syscall;
- new namespaces (``unshare``, ``setns``, ``clone`` with ``CLONE_NEWUSER``; ``clone3``, whose flags a filter
  cannot read, answers ENOSYS so libc falls back to ``clone``), mounts, and the kernel's larger attack
  surfaces no agent needs (keyrings, BPF, perf events, userfaultfd, module and kexec loading, handles);
- ``TIOCSTI``, which would type into a terminal outside.

Syscalls of another architecture (the x32 or i386 ABI on x86-64) are killed, libseccomp's default.
"""

from __future__ import annotations

import errno
import socket
import tempfile
from typing import IO

from ouroboros_gates.schemas.errors import PermanentError

__all__ = ["SeccompUnavailable", "compiled_filter"]

_FAMILIES_ALLOWED = (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK)
_FAMILIES_TOP = 64  # above every address family Linux defines (AF_MAX is 46 in 6.x)
_REFUSED = (
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "open_by_handle_at",
    "name_to_handle_at",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "ptrace",
    "process_vm_writev",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "quotactl",
)
_CLONE_NEWUSER = 0x10000000
_TIOCSTI = 0x5412


class SeccompUnavailable(PermanentError):
    """libseccomp cannot be loaded here, so the sandbox cannot filter syscalls."""


def compiled_filter() -> IO[bytes]:
    """The compiled BPF program in an unlinked file at offset 0, ready to pass to ``bwrap --seccomp FD``."""
    try:
        import pyseccomp as sc  # type: ignore[import-untyped]  # ctypes over libseccomp.so.2
    except (ImportError, OSError, RuntimeError) as exc:
        raise SeccompUnavailable(f"no seccomp: libseccomp cannot be loaded ({exc})") from exc
    program = sc.SyscallFilter(defaction=sc.ALLOW)
    for family in range(_FAMILIES_TOP):
        if family not in _FAMILIES_ALLOWED:
            program.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket", sc.Arg(0, sc.EQ, family))
    for name in _REFUSED:
        try:
            program.add_rule(sc.ERRNO(errno.EPERM), name)
        except OSError:  # a syscall this architecture does not have: nothing to refuse
            continue
    program.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_NEWUSER, _CLONE_NEWUSER))
    program.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    program.add_rule(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, _TIOCSTI))
    compiled = tempfile.TemporaryFile()  # noqa: SIM115  (handed to the caller, who closes it)
    program.export_bpf(compiled)
    compiled.flush()
    compiled.seek(0)
    return compiled

"""Work done in a forked child whose answer comes back over a pipe.

    child = fork_child(work)    # the child runs ``work`` (bytes out), writes them to the pipe and exits
    ...                         # the caller may wait for ``child.pipe`` to be readable (``select``)
    data = child.answer()       # read to its end, the child reaped; b"" when it died before answering

The child sees the parent's memory as it was at the fork and shares no interpreter with it; what it
allocates goes away with it. It never returns into the caller's code: whatever ``work`` raises ends
the child with nothing written, so the caller encodes its own errors into the bytes it wants back.
It lies on the lowest floor, as a tool of every floor above: ``ouro measure h-fleet``
(``workers``) reads its shares of the run files in children, the gate server (``ops``) its warn gates.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Child", "fork_child"]


@dataclass(frozen=True)
class Child:
    """A forked child, and the read end of the pipe its answer comes back on."""

    pid: int
    pipe: int

    def answer(self) -> bytes:
        """The child's answer, read to its end (the child writes everything, then exits), and the child
        waited for; b"" when it died before answering."""
        with os.fdopen(self.pipe, "rb") as pipe:
            data = pipe.read()
        os.waitpid(self.pid, 0)
        return data


def fork_child(work: Callable[[], bytes], nice: int = 0) -> Child:
    """Start ``work`` in a child (at ``nice`` more niceness); raises ``OSError`` when no process can be
    had, with both ends of the pipe closed."""
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        raise
    if pid:
        os.close(write_end)
        return Child(pid, read_end)
    os.close(read_end)  # the child: never returns
    try:
        if nice:
            os.nice(nice)
        data = work()
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)
    finally:
        os._exit(0)

"""A forked child's answer comes back over a pipe; a child that dies answers nothing, and is reaped."""

from __future__ import annotations

import os

import pytest

from ouroboros_gates.schemas._child import fork_child


def _fail() -> bytes:
    raise RuntimeError("in the child")


def test_the_child_answers_with_the_parents_memory_and_is_reaped() -> None:
    seen = {"parent": os.getpid()}

    def work() -> bytes:  # run in the child: its pid and niceness, the parent's pid from memory
        return f"{seen['parent']} {os.getpid()} {os.nice(0)}".encode()

    child = fork_child(work, nice=3)
    parent, pid, nice = child.answer().split()
    assert (int(parent), int(pid)) == (os.getpid(), child.pid)
    assert int(nice) == min(os.nice(0) + 3, 19)  # 19: the most a process can be
    with pytest.raises(ChildProcessError):  # waited for: no zombie is left
        os.waitpid(child.pid, os.WNOHANG)


def test_a_child_that_raises_answers_nothing() -> None:
    child = fork_child(_fail)
    assert child.answer() == b""
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)


def test_a_failed_fork_closes_both_ends_of_its_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[int] = []
    real_pipe = os.pipe

    def pipe() -> tuple[int, int]:
        ends = real_pipe()
        opened.extend(ends)
        return ends

    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "pipe", pipe)
    monkeypatch.setattr(os, "fork", no_fork)
    with pytest.raises(OSError):
        fork_child(lambda: b"never")
    for end in opened:
        with pytest.raises(OSError):
            os.fstat(end)

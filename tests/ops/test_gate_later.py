"""The gate server's deferred work: the latest job of each key, run in a forked child, its result applied
here."""

from __future__ import annotations

import logging
import os
import time

import pytest

from ouroboros_gates.ops.gate import later as later_module
from ouroboros_gates.ops.gate.later import Later


def test_the_latest_job_of_each_key_runs_in_a_child_and_its_result_is_applied_here(
    caplog: pytest.LogCaptureFixture,
) -> None:
    later = Later()
    applied: list[object] = []
    later.submit("s1", lambda: ("older", os.getpid()), applied.append)
    later.submit("s1", lambda: ("newer", os.getpid()), applied.append)  # replaces the one not yet started
    later.submit("s2", lambda: 1 / 0, applied.append)  # fails in its child: logged, never applied
    assert later.pending == 2 and later.fds() == []
    with caplog.at_level(logging.WARNING, logger="ouroboros_gates.ops.gate"):
        later.drain()
    assert later.pending == 0
    assert len(applied) == 1
    (label, pid) = applied[0]  # type: ignore[misc]
    assert label == "newer" and pid != os.getpid()
    assert "ZeroDivisionError" in caplog.text


def test_a_child_past_its_limit_is_killed_and_its_job_dropped(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(later_module, "CHILD_LIMIT_S", 0.2)
    later = Later()
    applied: list[object] = []
    later.submit("s1", lambda: time.sleep(600), applied.append)  # a warn gate that never ends
    later.start()
    assert later.fds()  # running in its child
    with caplog.at_level(logging.WARNING, logger="ouroboros_gates.ops.gate"):
        deadline = time.monotonic() + 60
        while later.pending and time.monotonic() < deadline:
            time.sleep(0.05)
            later.stop_overdue()
    assert later.pending == 0 and applied == []
    assert "is killed" in caplog.text and "died before answering" in caplog.text
    later.submit("s1", lambda: "next", applied.append)  # the next job of that session runs as usual
    later.drain()
    assert applied == ["next"]

"""Time limits on the gate server's work, so that no payload can hold it (every session's calls wait on it).

- ``budget(seconds)``: work in the main thread that runs past ``seconds`` raises ``OverBudget`` where it
  stands (a ``SIGALRM`` timer: Python code, and the regular-expression engine, check for signals). The
  caller says what the work was worth: the facts of one line that took too long are left out for that
  gate, a gate too slow for a decision is left out of it. Budgets do not nest: inside one, another is
  covered by the outer one and says so (``armed`` false), so only the outermost catches its overrun.
- ``watchdog(seconds)``: work that has not returned after ``seconds``, stuck in code that never checks for
  signals, ends the process (``faulthandler``'s own C thread, which needs no interpreter lock, writes every
  thread's traceback to the log and exits); the next hook finds no server and starts a fresh one.

``install()`` sets the ``SIGALRM`` handler once, at the server's start; an alarm outside a budget does
nothing.
"""

from __future__ import annotations

import faulthandler
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["OverBudget", "budget", "install", "watchdog"]


class OverBudget(BaseException):
    """Work ran past its budget. A ``BaseException``, so that no ``except Exception`` on the way (a miner's
    own, or ours around a gate that fails) takes it for a failure of the work itself."""


class _Armed:
    on = False


def _expire(signum: int, frame: FrameType | None) -> None:
    if _Armed.on:
        _Armed.on = False
        raise OverBudget


def install() -> None:
    """Route ``SIGALRM`` to the budgets (the main thread only)."""
    signal.signal(signal.SIGALRM, _expire)


@contextmanager
def budget(seconds: float) -> Iterator[bool]:
    """Raise ``OverBudget`` in the work inside when it runs past ``seconds``; yields whether this budget is
    the one armed (False: an outer budget covers the work, and its overrun is the outer one's)."""
    if _Armed.on:
        yield False
        return
    _Armed.on = True
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _Armed.on = False


@contextmanager
def watchdog(seconds: float) -> Iterator[None]:
    """End the process (tracebacks to stderr, the server's log) if the work inside has not returned after
    ``seconds``."""
    faulthandler.dump_traceback_later(seconds, exit=True, file=sys.stderr)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()

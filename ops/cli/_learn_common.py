"""What every ``ouro learn`` command shares: the workspace and the progress lines on stderr."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ouroboros_gates.schemas.settings import load_settings

if TYPE_CHECKING:
    from ouroboros_gates.decider.learn import Workspace

__all__ = ["progress", "say", "workspace"]


def workspace() -> Workspace:
    """The learning workspace under the state directory."""
    from ouroboros_gates.decider.learn import Workspace

    return Workspace(load_settings().state_dir / "learn")


def progress(what: str) -> Callable[[int, int], None]:
    """Every 50th step (and the last) as a line on stderr."""

    def show(done: int, total: int) -> None:
        if done == total or done % 50 == 0:
            print(f"{what}: {done}/{total}", file=sys.stderr)

    return show


def say(line: str) -> None:
    """A progress line on stderr."""
    print(line, file=sys.stderr)

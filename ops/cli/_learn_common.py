"""What every ``ouro learn`` command shares: the workspace, the progress lines on stderr and the metered chat
model."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ouroboros_gates.schemas.errors import OuroError
from ouroboros_gates.schemas.settings import load_settings

if TYPE_CHECKING:
    from ouroboros_gates.decider.learn import Workspace
    from ouroboros_gates.llm import MeteredClient

__all__ = ["metered_client", "progress", "say", "workspace"]


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


def metered_client(usd: float | None, calls: int | None) -> MeteredClient:
    """The configured chat model, metered under the given ceilings, replaying from ``<state>/responses``."""
    from ouroboros_gates.llm import (
        ChatClient,
        MeteredClient,
        ResponseCache,
        endpoint_from_settings,
        load_manifest,
    )

    settings = load_settings()
    endpoint = endpoint_from_settings(settings)
    if endpoint is None or settings.model is None:
        raise OuroError("no chat model is configured: set OURO_MODEL (and OURO_MODEL_URL)")
    return MeteredClient(
        ChatClient(endpoint),
        load_manifest(settings.model),
        usd_ceiling=usd,
        call_ceiling=calls,
        cache=ResponseCache(settings.state_dir / "responses"),
    )

"""Paths named by messages, confined to the configured roots (the state directory and ``OURO_ROOTS``) before
anything is read: every worker that opens a path from a message (the miner's runs, the decider's checkouts)
resolves it here."""

from __future__ import annotations

from pathlib import Path

from ouroboros_gates.schemas.errors import PermanentError
from ouroboros_gates.schemas.settings import Settings

__all__ = ["confine"]


def confine(path: str, settings: Settings) -> Path:
    """Resolve a path from a message, refusing anything outside the configured roots."""
    resolved = Path(path).expanduser().resolve()
    roots = settings.allowed_roots
    if not any(resolved.is_relative_to(root) for root in roots):
        shown = ", ".join(str(root) for root in roots)
        raise PermanentError(f"path {path!r} is outside the configured roots ({shown}): set OURO_ROOTS")
    return resolved

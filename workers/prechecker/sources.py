"""Where the pre-check looks besides the forge: the recorded and on-disk runs, and the registered miners."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ouroboros_gates.events import EventStore
from ouroboros_gates.miners import discover
from ouroboros_gates.schemas import RunRecorded
from ouroboros_gates.schemas.kinds import RUN_ID_PATTERN

__all__ = ["RunIndex", "registered_kinds"]

_RUN = re.compile(RUN_ID_PATTERN)


class RunIndex:
    """Whether a run id names a run: recorded in the event log, or a run directory under a root."""

    def __init__(self, store: EventStore | None, roots: Iterable[Path]) -> None:
        self.store = store
        self.roots = tuple(roots)
        self._seen: dict[str, bool] = {}

    def __call__(self, run: str) -> bool:
        if run not in self._seen:
            self._seen[run] = self.file(run) is not None
        return self._seen[run]

    def file(self, run: str) -> Path | None:
        """The run's ``events.jsonl``: as recorded (when the file is still there), else under a root."""
        if not _RUN.match(run):
            return None
        recorded = self._recorded(run)
        if recorded is not None and recorded.is_file():
            return recorded
        return self._under_roots(run)

    def _under_roots(self, run: str) -> Path | None:
        """The run's ``events.jsonl`` under the first root that holds it, in either layout."""
        # ``run`` has no separator (checked by ``file``), so these paths stay under their root.
        candidates = [
            path
            for root in self.roots
            for path in (root / run / "events.jsonl", root / "runs" / run / "events.jsonl")
        ]
        return next((path for path in candidates if path.is_file()), None)

    def _recorded(self, run: str) -> Path | None:
        """Where the run was last recorded, if it was."""
        recorded = [] if self.store is None else self.store.read_stream(f"run/{run}")
        paths = [e.decode_as(RunRecorded).path for e in recorded if e.type == RunRecorded.TYPE]
        return Path(paths[-1]) if paths else None


def registered_kinds() -> dict[str, tuple[str, ...]]:
    """Every registered miner's name and the corpus kinds its extractor reads."""
    miners, _broken = discover()
    return {name: miner.corpus for name, miner in miners.items()}

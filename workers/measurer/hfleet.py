"""h_fleet, the fleet's prompt-cache hit ratio, straight from run files, and the runs that fall below it.

    h_fleet = Σ cache_read / Σ (input + cache_creation + cache_read)

over the usage of every CSF envelope line ``{"event_type": "result", "event": {…, "usage": {…}}}``: the jq
command (docs/loop.md, "The h_fleet floor"), line for line. Sums are kept as floats and added in file order,
then line order, as jq adds its doubles, so the ratio is the same double jq prints. Each run (one file) has
its own ratio h_r; an *offender* is a run whose h_r is below the floor 0.9867, and offenders are ranked
ascending (ties by run). A run that read no prompt tokens has no h_r and is never an offender.

Lines are read lazily with orjson. A line jq could not read (not JSON, not an object, a result whose
``event`` or ``usage`` is not an object, a count that is not a number) is skipped and counted as
malformed; a blank line is neither.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

__all__ = ["FLOOR", "HFleet", "RunRatio", "offenders", "read_h_fleet", "read_h_fleet_runs", "run_name"]

FLOOR = 0.9867
"""The stated floor of h (#241; docs/loop.md, "The h_fleet floor")."""

_COUNTS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


@dataclass(frozen=True)
class RunRatio:
    """One run's prompt-cache numbers: tokens read from cache, and every prompt token."""

    run: str
    cache_read: float
    prompt_tokens: float

    @property
    def h(self) -> float | None:
        """h_r = cache_read / prompt_tokens; None when the run read no prompt tokens."""
        return self.cache_read / self.prompt_tokens if self.prompt_tokens else None


def offenders(runs: Iterable[RunRatio], floor: float = FLOOR) -> list[RunRatio]:
    """The runs whose h_r is below ``floor``, lowest first (ties by run)."""
    below = [(h, r.run, r) for r in runs if (h := r.h) is not None and h < floor]
    return [r for _, _, r in sorted(below, key=lambda item: (item[0], item[1]))]


@dataclass(frozen=True)
class HFleet:
    """h_fleet over a set of run files, with each file's own numbers and what could not be read."""

    cache_read: float
    prompt_tokens: float
    runs: tuple[RunRatio, ...]
    lines: int
    results: int
    malformed: int

    @property
    def value(self) -> float | None:
        """Σ cache_read / Σ prompt tokens; None when no prompt token was read (jq fails there)."""
        return self.cache_read / self.prompt_tokens if self.prompt_tokens else None


def run_name(path: Path) -> str:
    """A run's name: its directory for ``<run>/events.jsonl``, else the file's stem."""
    return path.parent.name if path.name == "events.jsonl" else path.stem


def _usage(line: bytes) -> tuple[float, float] | bool:
    """(cache_read, prompt) of a result envelope; True for another line; False for a malformed one."""
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(doc, dict):
        return False
    if doc.get("event_type") != "result":
        return True
    event = doc.get("event")
    if event is None:
        return (0.0, 0.0)
    if not isinstance(event, dict):
        return False
    usage = event.get("usage")
    if usage is None or usage is False:
        return (0.0, 0.0)
    if not isinstance(usage, dict):
        return False
    counts = [_count(usage.get(name)) for name in _COUNTS]
    if any(c is None for c in counts):
        return False
    read = counts[2] or 0.0
    return read, (counts[0] or 0.0) + (counts[1] or 0.0) + read


def _count(value: Any) -> float | None:
    """jq's ``(.x // 0)`` as a number: null and false are 0; anything but a number is unreadable."""
    if value is None or value is False:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def read_h_fleet(paths: Sequence[Path]) -> HFleet:
    """h_fleet and each file's h_r over ``paths``, read in the order given (raises ``OSError``)."""
    return read_h_fleet_runs([(run_name(path), (path,)) for path in paths])


def read_h_fleet_runs(runs: Sequence[tuple[str, Sequence[Path]]]) -> HFleet:
    """h_fleet and each run's h_r over ``(name, files)`` runs (``harness.expand``), in the order given."""
    total_read = total_prompt = 0.0
    lines = results = malformed = 0
    ratios: list[RunRatio] = []
    for name, files in runs:
        run_read = run_prompt = 0.0
        for path in files:
            with path.open("rb") as handle:
                for raw in handle:
                    lines += 1
                    if raw.isspace():
                        continue
                    found = _usage(raw)
                    if found is True:
                        continue
                    if found is False:
                        malformed += 1
                        continue
                    read, prompt = found
                    results += 1
                    total_read, total_prompt = total_read + read, total_prompt + prompt
                    run_read, run_prompt = run_read + read, run_prompt + prompt
        ratios.append(RunRatio(name, run_read, run_prompt))
    return HFleet(total_read, total_prompt, tuple(ratios), lines, results, malformed)

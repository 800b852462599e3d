"""Gate denials per gate, read from the runs themselves: the hook writes each refusal it hands the agent into
the session's log as an ``OuroborosGate`` line naming the gates that fired (``ops.hook``), so the runs the log
recorded hold every denial. A file is read again only when its size or time changed.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["MARK", "count_denials", "denials_in"]

MARK = b'"hook_event_name":"OuroborosGate"'
"""What a refusal line holds (``ops.gate.record.envelope`` writes compact JSON)."""

_seen: dict[Path, tuple[int, int, Counter[str]]] = {}
_lock = threading.Lock()


def denials_in(data: bytes) -> Counter[str]:
    """Denials per gate in one log's bytes (a line that is not JSON is not a denial)."""
    found: Counter[str] = Counter()
    for line in data.splitlines():
        if MARK not in line:
            continue
        event = _gate_event(line)
        if event.get("decision") == "deny":
            found.update(_gates(event))
    return found


def _gate_event(line: bytes) -> dict[str, Any]:
    """The gate event a refusal line records (empty when the line is not JSON or its event not an object)."""
    try:
        event = json.loads(line).get("event")
    except (ValueError, AttributeError):
        return {}
    return event if isinstance(event, dict) else {}


def _gates(event: dict[str, Any]) -> list[str]:
    """The gates a denial names: its list, or one name written alone; ``(unnamed)`` when it names none."""
    gates = event.get("gates")
    if isinstance(gates, str):
        gates = [gates]
    return [str(gate) for gate in gates] if isinstance(gates, list) and gates else ["(unnamed)"]


def _of(path: Path) -> Counter[str]:
    try:
        stat = path.stat()
    except OSError:
        return Counter()  # a run moved or deleted since it was recorded: no denials to read
    with _lock:
        known = _seen.get(path)
    if known is not None and known[:2] == (stat.st_size, stat.st_mtime_ns):
        return known[2]
    try:
        counted = denials_in(path.read_bytes())
    except OSError:
        return Counter()
    with _lock:
        _seen[path] = (stat.st_size, stat.st_mtime_ns, counted)
    return counted


def count_denials(paths: Iterable[Path]) -> Counter[str]:
    """Denials per gate over the runs at ``paths``."""
    total: Counter[str] = Counter()
    for path in dict.fromkeys(paths):
        total.update(_of(path))
    return total

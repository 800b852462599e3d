"""The snapshot ``<state>/ouroboros.json``: the latest numbers, which the ops view and ``/api/ouroboros``
show.

Shape (keys sorted, two-space indent)::

    {"generated_at": "<the instant measured, UTC ISO>", "timezone": "America/Los_Angeles",
     "series": {"ouroboros.<name>": [<the points of the latest at: at, value, low, high, reason, labels>]},
     "h_fleet": {"value": …, "floor": 0.9867, "offenders": [{"rank", "run", "h_r", "cache_read",
                 "prompt_tokens"}, …]},
     "accepted_miners": {"generic": {"count": n, "miners": [...]}, "tenant": {…}}}

``generated_at`` is the instant measured, not the wall clock, so measuring the same log at the same
instant writes the same bytes. A snapshot is replaced atomically, and never by one measured earlier (a
redelivered old message cannot roll the ops view back).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import orjson

from ouroboros_gates.schemas import Scope, SeriesPoint
from ouroboros_gates.workers.measurer.hfleet import FLOOR, RunRatio, offenders
from ouroboros_gates.workers.measurer.inputs import MeasureInput
from ouroboros_gates.workers.measurer.series import ZONE, h_fleet

__all__ = ["build_snapshot", "write_snapshot"]


def _latest(points: Sequence[SeriesPoint]) -> dict[str, list[dict[str, Any]]]:
    newest: dict[str, datetime] = {}
    for point in points:
        newest[point.series] = max(point.at, newest.get(point.series, point.at))
    latest: dict[str, list[dict[str, Any]]] = {}
    for point in points:
        if point.at == newest[point.series]:
            shown = point.to_json_dict()
            latest.setdefault(point.series, []).append(
                {k: shown[k] for k in ("at", "value", "low", "high", "reason", "labels")}
            )
    return latest


def _offenders(inp: MeasureInput) -> list[dict[str, Any]]:
    ratios = [RunRatio(r.run, r.cache_read, r.prompt_tokens) for r in inp.runs]
    return [
        {"rank": rank, "run": r.run, "h_r": r.h, "cache_read": r.cache_read, "prompt_tokens": r.prompt_tokens}
        for rank, r in enumerate(offenders(ratios), start=1)
    ]


def build_snapshot(points: Sequence[SeriesPoint], inp: MeasureInput, zone: ZoneInfo = ZONE) -> dict[str, Any]:
    """The snapshot of ``points`` (as ``measure`` made them from ``inp``)."""
    by_scope: dict[str, list[str]] = {scope.value: [] for scope in Scope}
    for miner, scope in inp.accepted:
        by_scope[scope.value].append(miner)
    return {
        "generated_at": inp.at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "timezone": zone.key,
        "series": _latest(points),
        "h_fleet": {"value": h_fleet(inp).value, "floor": FLOOR, "offenders": _offenders(inp)},
        "accepted_miners": {
            scope: {"count": len(names), "miners": names} for scope, names in by_scope.items()
        },
    }


def _generated_at(path: Path) -> datetime | None:
    try:
        return datetime.fromisoformat(orjson.loads(path.read_bytes())["generated_at"])
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None  # no snapshot yet, or one we cannot read: it is replaced


def write_snapshot(path: Path, snapshot: dict[str, Any]) -> bool:
    """Replace ``path`` atomically with ``snapshot`` unless it holds a later one; whether it wrote."""
    previous = _generated_at(path)
    if previous is not None and previous > datetime.fromisoformat(snapshot["generated_at"]):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    data = orjson.dumps(snapshot, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    handle, temporary = tempfile.mkstemp(prefix=".ouroboros-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return True

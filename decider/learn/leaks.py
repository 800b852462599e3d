"""``audit-leaks``: how well each signal alone separates the two sides of a pair.

For every pair whose vulnerable and fixed sides both have a record, a numeric or bool feature separates the
sides by ``|P(vulnerable > fixed) - P(vulnerable < fixed)|``, an enum by the share of pairs where it differs;
an instrument's state the same way (a state a fixed side reaches by losing its sink tracks the label, not the
code). Whether the candidate was surfaced at all is reported beside them. Anything above 0.20 is flagged.

The delta units' own features (``delta.*``: what the change did) are audited the same way, the introducing
change against the repair of the same pair: a delta signal that separates them follows how the pair was made
as much as the code (in a corpus whose introducing changes are its repairs reversed, whatever a repair adds
an introducing change removes). A change's other features are its head function's, audited with the pins.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ouroboros_gates.decider.analyse import Analysed
from ouroboros_gates.decider.learn.labels import LabelledUnit

__all__ = ["FLAG", "audit_leaks"]

FLAG = 0.20
DELTA = "delta."
"""The prefix of the features a change has and a function alone does not."""


def _compare(a: Any, b: Any) -> int:
    """How the vulnerable side's value relates to the fixed side's: +1, -1 or 0 (an enum: 1 when it differs;
    a value against a null: +1 when only the vulnerable side has one)."""
    if a is None or b is None:
        return _against_null(a, b)
    if isinstance(a, str) or isinstance(b, str):
        return int(a != b)
    return int(a > b) - int(a < b)


def _against_null(a: Any, b: Any) -> int:
    """Two nulls compare equal; otherwise +1 when only the vulnerable side has a value, -1 when only the fixed
    side has."""
    return 0 if a is b else (1 if a is not None else -1)


def _separations(
    pairs: Sequence[tuple[LabelledUnit, LabelledUnit]], analysed: Mapping[str, Analysed | None]
) -> list[dict[str, Any]]:
    """Per signal, over the pairs both of whose units have a record (the positive unit first): pairs compared,
    separation and whether it is flagged, sorted by separation."""
    signals: dict[str, list[int]] = defaultdict(list)
    for v, f in pairs:
        a, b = analysed.get(v.uid), analysed.get(f.uid)
        if a is None or b is None:
            continue
        _compare_records(a, b, signals)
    rows = [_separation(name, diffs) for name, diffs in signals.items()]
    rows.sort(key=lambda r: (-r["separation"], r["signal"]))
    return rows


def _compare_records(a: Analysed, b: Analysed, signals: dict[str, list[int]]) -> None:
    """Add one pair's comparison of every feature, and of every instrument's state, to ``signals``."""
    for name in sorted(set(a.record.x) | set(b.record.x)):
        signals[name].append(_compare(a.record.x.get(name), b.record.x.get(name)))
    for inst in sorted(set(a.record.instruments) | set(b.record.instruments)):
        sa, sb = a.record.instruments.get(inst), b.record.instruments.get(inst)
        signals[f"{inst}.<state>"].append(int((sa.state if sa else None) != (sb.state if sb else None)))


def _separation(name: str, diffs: Sequence[int]) -> dict[str, Any]:
    """A signal's row: pairs compared, how far it separates the sides, and whether that is flagged."""
    separation = abs(sum(diffs)) / len(diffs)
    return {
        "signal": name,
        "pairs": len(diffs),
        "separation": round(separation, 4),
        "flagged": separation > FLAG,
    }


def _pairs(
    units: Sequence[LabelledUnit], positive: str, negative: str
) -> list[tuple[LabelledUnit, LabelledUnit]]:
    sides: dict[tuple[str, str], dict[str, LabelledUnit]] = defaultdict(dict)
    for u in units:
        if u.direction in (positive, negative):
            sides[(u.source, u.source_ref)][u.direction] = u
    return [(s[positive], s[negative]) for s in sides.values() if len(s) == 2]


def audit_leaks(units: Sequence[LabelledUnit], analysed: Mapping[str, Analysed | None]) -> dict[str, Any]:
    """Per signal: pairs compared, separation, and whether it is flagged; sorted by separation. ``signals``
    compare a pair's vulnerable and fixed functions (pin units), ``delta_signals`` the change features of its
    introducing change and its repair (delta units)."""
    pairs = _pairs(units, "vulnerable", "fixed")
    both, surfaced = _surfaced(pairs, analysed)
    rows = _separations(pairs, analysed)
    deltas = _pairs(units, "introducing", "repair")
    # a change's head is one of the pair's functions: only the change's own features are new here
    delta_rows = [row for row in _separations(deltas, analysed) if row["signal"].startswith(DELTA)]
    return {
        "pairs": len(pairs),
        "both_sides_recorded": both,
        "surfaced": surfaced,
        "signals": rows,
        "flagged": _flagged(rows),
        "delta_pairs": len(deltas),
        "delta_signals": delta_rows,
        "delta_flagged": _flagged(delta_rows),
    }


def _surfaced(
    pairs: Sequence[tuple[LabelledUnit, LabelledUnit]], analysed: Mapping[str, Analysed | None]
) -> tuple[int, dict[str, Any]]:
    """How many pairs have both sides recorded; how many only one side, and whether that separates them."""
    sides = Counter((analysed.get(v.uid) is not None, analysed.get(f.uid) is not None) for v, f in pairs)
    up, down = sides[True, False], sides[False, True]
    reach = abs(up - down) / len(pairs) if pairs else 0.0
    return sides[True, True], {
        "vulnerable_only": up,
        "fixed_only": down,
        "separation": round(reach, 4),
        "flagged": reach > FLAG,
    }


def _flagged(rows: Sequence[dict[str, Any]]) -> list[str]:
    return [r["signal"] for r in rows if r["flagged"]]

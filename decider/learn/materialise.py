"""Labelled units as the decider's instruments see them: each pair becomes a small git history and the
candidate of the labelled (function, family) is analysed at the unit's pin, or over its delta.

One repository per pair holds three commits: C1 the fixed side, C2 the vulnerable side, C3 the fixed side
again. The vulnerable pin is C2, the fixed pin C1; the introducing delta is C1..C2 and the repair C2..C3 (a
benign change: C1 its base, C2 its tip). A labelled unit whose (function, family) is not a candidate, because
no instrument signalled that family there, is a reach miss: it has no record, and it counts against recall.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ouroboros_gates.decider.analyse import Analysed, analyse
from ouroboros_gates.decider.frameworks import Priors
from ouroboros_gates.decider.instruments import Signal
from ouroboros_gates.decider.instruments.taint import Flow
from ouroboros_gates.decider.learn.errors import LearnError
from ouroboros_gates.decider.learn.labels import Direction, LabelledUnit
from ouroboros_gates.forge.git import git
from ouroboros_gates.schemas import Candidate, FeatureRecord

__all__ = ["EXTENSIONS", "analyse_units", "from_json", "history", "to_json"]

EXTENSIONS = {
    "python": "py",
    "javascript": "js",
    "typescript": "ts",
    "java": "java",
    "php": "php",
    "c": "c",
    "cpp": "cpp",
}
_WHEN = "1700000000 +0000"


def history(root: Path, path: str, versions: Sequence[str]) -> list[str]:
    """A fresh repository at ``root`` whose commits hold ``versions`` of ``path`` in turn; their shas."""
    stream = _fast_import(path, versions)
    git("init", "-q", str(root))
    done = git(
        "fast-import",
        "--quiet",
        "--done",
        "--export-marks=marks",
        cwd=root,
        input=b"\n".join(stream) + b"\n",
        check=False,
    )
    if done.returncode != 0:
        raise LearnError(f"git fast-import: {done.stderr.decode(errors='replace').strip()}")
    marks = _marks(root / "marks")
    return [marks[f":{i}"].strip() for i in range(1, len(versions) + 1)]


def _fast_import(path: str, versions: Sequence[str]) -> list[bytes]:
    """The fast-import stream of one commit per version of ``path``, each on the one before, then ``done``."""
    stream = []
    for i, text in enumerate(versions, 1):
        body = text.encode()
        message = f"version {i}".encode()
        stream += [
            b"commit refs/heads/main",
            f"mark :{i}".encode(),
            f"committer ouro <ouro@localhost> {_WHEN}".encode(),
            b"data %d" % len(message),
            message,
        ]
        if i > 1:
            stream.append(f"from :{i - 1}".encode())
        stream += [f"M 100644 inline {path}".encode(), b"data %d" % len(body), body, b""]
    stream.append(b"done")
    return stream


def _marks(path: Path) -> dict[str, str]:
    """The exported marks: each ``:n`` mark's commit sha."""
    return dict(line.split(" ", 1) for line in path.read_text().split("\n") if line)


def _pick(found: Iterable[Analysed], unit: LabelledUnit) -> Analysed | None:
    for item in found:
        if item.candidate.function == unit.function and item.candidate.family == unit.family:
            return item
    return None


def _analyse_pair(
    units: Sequence[LabelledUnit], workdir: Path, priors: Priors = "detected"
) -> dict[str, Analysed | None]:
    """Every unit of one pair (or benign change, or adjudication) analysed in one small history."""
    first = units[0]
    ext = EXTENSIONS.get(first.language)
    if ext is None:
        return {u.uid: None for u in units}
    path = f"src/module.{ext}"
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        root = Path(tmp)
        plan = _history(root, path, units)
        out: dict[str, Analysed | None] = {}
        for u in units:
            head, base = plan[u.direction]
            out[u.uid] = _pick(analyse(root, head, base, u.repo, priors=priors), u)
        return out


def _history(root: Path, path: str, units: Sequence[LabelledUnit]) -> dict[str, tuple[str, str | None]]:
    """Commit the units' code as a small history; per direction, the head (and base) it is analysed at."""
    by_direction = {u.direction: u for u in units}
    sides = _pair_sides(by_direction)
    if sides is not None:
        vulnerable, fixed = sides
        c1, c2, c3 = history(root, path, [fixed.code, vulnerable.code, fixed.code])
        return {"vulnerable": (c2, None), "fixed": (c1, None), "introducing": (c2, c1), "repair": (c3, c2)}
    if "benign" in by_direction:
        return _benign_history(root, path, by_direction["benign"])
    (c1,) = history(root, path, [units[0].code])
    return {u.direction: (c1, None) for u in units}


def _benign_history(root: Path, path: str, benign: LabelledUnit) -> dict[str, tuple[str, str | None]]:
    """A benign change as two commits: its base, then its code (analysed as the change between them)."""
    c1, c2 = history(root, path, [benign.base_code or "", benign.code])
    return {"benign": (c2, c1)}


def _pair_sides(by_direction: Mapping[Direction, LabelledUnit]) -> tuple[LabelledUnit, LabelledUnit] | None:
    """A pair's vulnerable and fixed code (its functions, else its changes); None for anything else."""
    vulnerable = by_direction.get("vulnerable") or by_direction.get("introducing")
    fixed = by_direction.get("fixed") or by_direction.get("repair")
    if vulnerable is not None and fixed is not None:
        return vulnerable, fixed
    return None


def analyse_units(
    units: Sequence[LabelledUnit],
    workdir: Path,
    progress: Callable[[int, int], None] | None = None,
    priors: Priors = "detected",
) -> dict[str, Analysed | None]:
    """Every unit analysed (None: a reach miss), pair by pair, with ``priors`` on (``decider.frameworks``)."""
    by_ref = _by_ref(units)
    out: dict[str, Analysed | None] = {}
    workdir.mkdir(parents=True, exist_ok=True)
    for i, group in enumerate(by_ref.values()):
        out |= _analyse_pair(group, workdir, priors)
        if progress is not None:
            progress(i + 1, len(by_ref))
    return out


def _by_ref(units: Sequence[LabelledUnit]) -> dict[tuple[str, str], list[LabelledUnit]]:
    """The units of each pair (or benign change, or adjudication): by source and reference."""
    by_ref: dict[tuple[str, str], list[LabelledUnit]] = {}
    for u in units:
        by_ref.setdefault((u.source, u.source_ref), []).append(u)
    return by_ref


def to_json(item: Analysed | None) -> dict[str, Any] | None:
    """An analysed unit as JSON (None stays None: a reach miss)."""
    if item is None:
        return None
    return {
        "candidate": item.candidate.to_json_dict(),
        "language": item.language,
        "record": item.record.to_json_dict(),
        "signals": [asdict(s) for s in item.signals],
        "roles": list(item.roles),
        "code": item.code,
        "start_line": item.start_line,
        "end_line": item.end_line,
        "changed_lines": list(item.changed_lines),
        "flows": [asdict(f) for f in item.flows],
        "priors": list(item.priors),
    }


def from_json(data: dict[str, Any] | None) -> Analysed | None:
    """The inverse of ``to_json``."""
    if data is None:
        return None
    return Analysed(
        candidate=Candidate.model_validate(data["candidate"]),
        language=data["language"],
        record=FeatureRecord.model_validate(data["record"]),
        signals=tuple(Signal(**{**s, "mechanisms": tuple(s["mechanisms"])}) for s in data["signals"]),
        roles=tuple(data["roles"]),
        code=data["code"],
        start_line=data["start_line"],
        end_line=data["end_line"],
        changed_lines=tuple(data["changed_lines"]),
        flows=tuple(
            Flow(**{**f, "tags": tuple(f["tags"]), "steps": tuple(f.get("steps", []))})
            for f in data.get("flows", [])
        ),
        priors=tuple(data.get("priors", [])),
    )


def dumps(item: Analysed | None) -> str:
    """One JSON line."""
    return json.dumps(to_json(item), sort_keys=True)
